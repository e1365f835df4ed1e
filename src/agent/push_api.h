/* SPDX-License-Identifier: MIT */
/*
 * The backends --push speaks, one table: where a profile goes and the
 * request body that carries it.
 *   pyroscope  POST URL/push.v1.PusherService/Push (Connect, JSON)
 *   parca      POST URL/api/profiles/writeraw (gRPC-gateway JSON)
 * Both carry the gzipped pprof as base64 with the same labels.
 */
#ifndef ALYS_PUSH_API_H
#define ALYS_PUSH_API_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/outbuf.h"

struct push_label {
	const char *name, *value;
};

/* A gzipped pprof. */
struct push_raw {
	const void *data;
	size_t len;
};

struct push_api {
	const char *name;	/* as --push-api takes it */
	const char *path;	/* appended to the URL's own path */
	/* __delta__="false": the values are the window's own. Pyroscope 1.x
	 * otherwise diffs memory's alloc_* against the series' last push
	 * itself, and stores nothing of its first. */
	bool delta_label;
	/* one series: the labels, and the profiles as its samples */
	void (*body)(struct outbuf *o, const struct push_label *labels, size_t n,
		     const struct push_raw *raw, size_t nr_raw);
};

/* name NULL: the default (pyroscope). NULL: no such API. */
const struct push_api *push_api_find(const char *name);
/* "pyroscope (default) or parca": for messages. */
const char *push_api_names(void);

/* Standard base64 with padding (RFC 4648), as proto3 JSON bytes. */
void base64_encode(struct outbuf *o, const void *data, size_t len);

#endif
