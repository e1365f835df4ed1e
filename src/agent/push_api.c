// SPDX-License-Identifier: MIT
#include "agent/push_api.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void base64_encode(struct outbuf *o, const void *data, size_t len)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const uint8_t *p = data;
	size_t i = 0;

	outbuf_reserve(o, (len + 2) / 3 * 4);
	for (; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		outbuf_char(o, abc[v >> 18]);
		outbuf_char(o, abc[(v >> 12) & 63]);
		outbuf_char(o, abc[(v >> 6) & 63]);
		outbuf_char(o, abc[v & 63]);
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);

		outbuf_char(o, abc[v >> 18]);
		outbuf_char(o, abc[(v >> 12) & 63]);
		outbuf_char(o, i + 1 < len ? abc[(v >> 6) & 63] : '=');
		outbuf_char(o, '=');
	}
}

static void json_str(struct outbuf *o, const char *s)
{
	outbuf_json_string(o, s, strlen(s));
}

static void label_list(struct outbuf *o, const struct push_label *l, size_t n)
{
	outbuf_char(o, '[');
	for (size_t i = 0; i < n; i++) {
		outbuf_str(o, i ? ",{\"name\":" : "{\"name\":");
		json_str(o, l[i].name);
		outbuf_str(o, ",\"value\":");
		json_str(o, l[i].value);
		outbuf_char(o, '}');
	}
	outbuf_char(o, ']');
}

/* A random (version 4) UUID: the sample's ID. */
static void uuid4(char out[37])
{
	uint8_t b[16] = { 0 };

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t)rand();
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
}

/* api/push/v1/push.proto: PushRequest{series: [RawProfileSeries{labels:
 * [LabelPair], samples: [RawSample{raw_profile, ID}]}]} */
static void pyroscope_body(struct outbuf *o, const struct push_label *l, size_t n,
			   const struct push_raw *raw, size_t nr_raw)
{
	outbuf_str(o, "{\"series\":[{\"labels\":");
	label_list(o, l, n);
	outbuf_str(o, ",\"samples\":[");
	for (size_t i = 0; i < nr_raw; i++) {
		char id[37];

		uuid4(id);
		outbuf_str(o, i ? ",{\"ID\":\"" : "{\"ID\":\"");
		outbuf_str(o, id);
		outbuf_str(o, "\",\"rawProfile\":\"");
		base64_encode(o, raw[i].data, raw[i].len);
		outbuf_str(o, "\"}");
	}
	outbuf_str(o, "]}]}");
}

/* parca profilestore/v1alpha1: WriteRawRequest{series: [RawProfileSeries{
 * labels: LabelSet{labels: [Label]}, samples: [RawSample{raw_profile}]}]} */
static void parca_body(struct outbuf *o, const struct push_label *l, size_t n,
		       const struct push_raw *raw, size_t nr_raw)
{
	outbuf_str(o, "{\"series\":[{\"labels\":{\"labels\":");
	label_list(o, l, n);
	outbuf_str(o, "},\"samples\":[");
	for (size_t i = 0; i < nr_raw; i++) {
		outbuf_str(o, i ? ",{\"rawProfile\":\"" : "{\"rawProfile\":\"");
		base64_encode(o, raw[i].data, raw[i].len);
		outbuf_str(o, "\"}");
	}
	outbuf_str(o, "]}]}");
}

/* The first is the default. */
static const struct push_api apis[] = {
	{ "pyroscope", "/push.v1.PusherService/Push", true, pyroscope_body },
	/* its HTTP/JSON gateway is mounted under /api (parca
	 * pkg/server/server.go); /profiles/writeraw is its web UI's */
	{ "parca", "/api/profiles/writeraw", false, parca_body },
};

const struct push_api *push_api_find(const char *name)
{
	if (!name)
		return &apis[0];
	for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
		if (!strcmp(apis[i].name, name))
			return &apis[i];
	return NULL;
}

const char *push_api_names(void)
{
	static char names[128];

	if (!names[0])
		for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s%s",
				 i == 0 ? "" : i + 1 < sizeof(apis) / sizeof(apis[0]) ? ", " : " or ",
				 apis[i].name, i == 0 ? " (default)" : "");
	return names;
}
