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

#include <stddef.h>

#include "outbuf.h"

struct push_label {
	const char *name, *value;
};

struct push_api {
	const char *name;	/* as --push-api takes it */
	const char *path;	/* appended to the URL */
	void (*body)(struct outbuf *o, const struct push_label *labels, size_t n,
		     const void *pprof, size_t len);
};

/* name NULL: the default (pyroscope). NULL: no such API. */
const struct push_api *push_api_find(const char *name);
/* "pyroscope (default) or parca": for messages. */
const char *push_api_names(void);

/* Standard base64 with padding (RFC 4648), as proto3 JSON bytes. */
void base64_encode(struct outbuf *o, const void *data, size_t len);

#endif
