/* SPDX-License-Identifier: MIT */
/*
 * --http: the live profile in Go's net/http/pprof conventions, served by
 * libmicrohttpd on its own threads while tracing:
 *   /debug/pprof/          an index
 *   /debug/pprof/allocs    pprof, alloc_space first; ?seconds=N: the delta
 *                          of the next N seconds
 *   /debug/pprof/heap      the same, inuse_space first
 *   /metrics               the tracer's counters, Prometheus text format
 * Nothing else is served; GET and HEAD only.
 */
#ifndef ALYS_HTTP_ENDPOINT_H
#define ALYS_HTTP_ENDPOINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

struct live_profile;
struct http_endpoint;

/* What --http ADDR means: "PORT" (on 127.0.0.1), "HOST:PORT" or
 * "[V6]:PORT", numeric hosts only. -1 with err when it is not an address,
 * or is not loopback without allow_remote. */
int http_parse_addr(const char *spec, bool allow_remote, struct sockaddr_storage *sa,
		    char *err, size_t errlen);

struct outbuf;
/* More of /metrics, Prometheus text format, on a request's thread. */
typedef void (*http_metrics_fn)(void *ctx, struct outbuf *o);

/* lp NULL: /metrics only (the agent pushes its profiles). */
struct http_endpoint *http_endpoint_start(const struct sockaddr_storage *sa,
					  struct live_profile *lp, http_metrics_fn more_metrics,
					  void *more_ctx, char *err, size_t errlen);
/* One metric with its HELP and TYPE lines; or those lines alone, for
 * labelled samples to follow. */
void http_metric(struct outbuf *o, const char *name, const char *type, const char *help,
		 uint64_t v);
void http_metric_head(struct outbuf *o, const char *name, const char *type, const char *help);
/* The metrics of live profiles, one table for --http's one and --all's
 * many: each metric's HELP and TYPE once, then a sample per profile with
 * its labels ("" or `pid="1",service_name="x"`, escaped). wait: as
 * live_profile_metrics. */
void http_profile_metrics(struct outbuf *o, size_t n, struct live_profile *const *lps,
			  const char *const *labels, bool wait);
/* The port it listens on (for PORT 0, the one the kernel chose). */
unsigned http_endpoint_port(const struct http_endpoint *h);
/* "HOST:PORT" or "[V6]:PORT" for a URL, in buf. */
const char *http_url_host(const struct sockaddr_storage *sa, unsigned port, char *buf,
			  size_t len);
/* Ends requests in progress (a ?seconds= wait ends at once) and stops. */
void http_endpoint_stop(struct http_endpoint *h);

#endif /* ALYS_HTTP_ENDPOINT_H */
