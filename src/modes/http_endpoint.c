// SPDX-License-Identifier: MIT
#include "modes/http_endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/live_profile.h"
#include "profile/gc_memory.h"
#include "profile/outbuf.h"
#include "lib/util.h"

/* Bounds on what a client can hold: connections, time, header bytes. */
#define MAX_CONNECTIONS 16
#define CONNECTION_TIMEOUT_S 15
#define REQUEST_MEMORY (16 * 1024)
#define MAX_SECONDS 3600

struct http_endpoint {
	struct MHD_Daemon *d;
	struct live_profile *lp;	/* NULL: /metrics only (the agent) */
	http_metrics_fn more_metrics;
	void *more_ctx;
	atomic_bool stopping;
	atomic_uint_fast64_t requests, rejected;
};

int http_parse_addr(const char *spec, bool allow_remote, struct sockaddr_storage *sa,
		    char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':');
	char host[INET6_ADDRSTRLEN + 2] = "127.0.0.1";
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	const char *port = colon ? colon + 1 : spec;
	size_t hlen = colon ? (size_t)(colon - spec) : 0;
	bool loopback;
	char *end;
	unsigned long p;

	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535 || *port == '-' || *port == '+') {
		snprintf(err, errlen, "--http %s: give PORT, HOST:PORT or [IPV6]:PORT, with a "
			 "port from 0 to 65535 (0: any free port)", spec);
		return -1;
	}
	if (colon) {
		if (hlen >= 2 && spec[0] == '[' && spec[hlen - 1] == ']') {
			spec++;
			hlen -= 2;
		}
		if (!hlen || hlen >= sizeof(host)) {
			snprintf(err, errlen, "--http %s: the host before the port is empty or too "
				 "long; give a numeric address (127.0.0.1, [::1])", spec);
			return -1;
		}
		memcpy(host, spec, hlen);
		host[hlen] = '\0';
	}
	if (getaddrinfo(host, port, &hints, &ai) || !ai) {
		snprintf(err, errlen, "--http: %s is not a numeric IPv4 or IPv6 address "
			 "(host names are not looked up): give e.g. 127.0.0.1:%lu or [::1]:%lu",
			 host, p, p);
		return -1;
	}
	memset(sa, 0, sizeof(*sa));
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (sa->ss_family == AF_INET)
		loopback = (ntohl(((struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	else
		loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)sa)->sin6_addr);
	if (!loopback && !allow_remote) {
		snprintf(err, errlen, "--http %s: not a loopback address; an allocation profile "
			 "shows the program's code to whoever can reach the port: add "
			 "--http-allow-remote to serve it beyond this machine", host);
		return -1;
	}
	return 0;
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type,
				void *buf, size_t len, bool attachment)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (attachment)
		MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_text(struct http_endpoint *h, struct MHD_Connection *c,
				 unsigned status, const char *text)
{
	char *copy = strdup(text);

	if (status >= 400)
		h->rejected++;
	if (!copy)
		return MHD_NO;
	return send_buf(c, status, "text/plain; charset=utf-8", copy, strlen(copy), false);
}

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>alys-bpf /debug/pprof/</title></head><body>\n"
	"<h1>alys-bpf: allocation profile of a Crystal process</h1>\n"
	"<p>Profiles in Go's pprof format, for <code>go tool pprof URL</code>:</p>\n<ul>\n"
	"<li><a href=\"allocs\">allocs</a>: everything allocated since alys-bpf attached "
	"(alloc_space first); <code>?seconds=N</code>: what the next N seconds allocate</li>\n"
	"<li><a href=\"heap\">heap</a>: the same profile, in-use bytes first "
	"(blocks not yet freed or collected)</li>\n"
	"<li><a href=\"/metrics\">/metrics</a>: the tracer's counters (Prometheus)</li>\n"
	"</ul></body></html>\n";

/* ?seconds=N, as Go's handlers take it; 0: absent. -1: not a number of
 * seconds. */
static long seconds_arg(struct MHD_Connection *c)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	char *end;
	long n;

	if (!s)
		return 0;
	errno = 0;
	n = strtol(s, &end, 10);
	if (!*s || *end || errno || n < 1 || n > MAX_SECONDS)
		return -1;
	return n;
}

/* Sleeps n seconds, or less when the endpoint stops. */
static void wait_seconds(struct http_endpoint *h, long n)
{
	struct timespec step = { 0, 100 * 1000000L };

	for (long i = 0; i < n * 10 && !h->stopping; i++)
		nanosleep(&step, NULL);
}

static enum MHD_Result serve_profile(struct http_endpoint *h, struct MHD_Connection *c,
				     bool heap, bool head)
{
	long secs = seconds_arg(c);
	struct live_totals *before = NULL;
	struct outbuf o;

	if (secs < 0)
		return send_text(h, c, MHD_HTTP_BAD_REQUEST,
				 "bad seconds: give a whole number of seconds from 1 to 3600\n");
	if (head)
		return send_buf(c, MHD_HTTP_OK, "application/octet-stream", NULL, 0, true);
	if (secs) {
		before = live_profile_totals(h->lp);
		wait_seconds(h, secs);
	}
	outbuf_init(&o, -1);
	live_profile_pprof(h->lp, before, heap, &o);
	live_totals_free(before);
	return send_buf(c, MHD_HTTP_OK, "application/octet-stream", o.buf, o.len, true);
}

void http_metric_head(struct outbuf *o, const char *name, const char *type, const char *help)
{
	outbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void http_metric(struct outbuf *o, const char *name, const char *type, const char *help,
		 uint64_t v)
{
	http_metric_head(o, name, type, help);
	outbuf_printf(o, "%s %" PRIu64 "\n", name, v);
}

struct counter_line {
	struct outbuf *o;
	const char *labels;
};

/* Counter names are the trace's (FORMAT.md): [a-z0-9_] only, or left out. */
static void each_counter(void *ctx, const char *name, uint64_t value)
{
	const struct counter_line *l = ctx;

	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return;
	outbuf_printf(l->o, "alys_tracer_counter{%s%sname=\"%s\"} %" PRIu64 "\n", l->labels,
		      *l->labels ? "," : "", name, value);
}

/* What one live profile's metrics read, taken once per request. */
struct profile_values {
	struct live_metrics m;
	uint64_t lost, resent, duty_windows;
};

static const struct {
	const char *name, *type, *help;
	size_t off;		/* of its uint64_t in struct profile_values */
} profile_metric[] = {
	{ "alys_events_total", "counter",
	  "Trace events read: allocations, frees and inferred frees.",
	  offsetof(struct profile_values, m.events) },
	{ "alys_lost_events_total", "counter", "Events the probes dropped (ring buffer full).",
	  offsetof(struct profile_values, lost) },
	{ "alys_stacks_resent_total", "counter",
	  "Stacks sent again after the kernel's cache forgot them.",
	  offsetof(struct profile_values, resent) },
	{ "alys_duty_windows_total", "counter",
	  "Duty-cycle windows the refill probes were attached for.",
	  offsetof(struct profile_values, duty_windows) },
	{ "alys_allocated_bytes_total", "counter",
	  "Bytes allocated since attach, estimated from the sampled events.",
	  offsetof(struct profile_values, m.alloc_space) },
	{ "alys_allocated_objects_total", "counter", "Objects allocated since attach, estimated.",
	  offsetof(struct profile_values, m.alloc_objects) },
	{ "alys_live_bytes", "gauge", "Bytes allocated and not yet freed or found collected.",
	  offsetof(struct profile_values, m.inuse_space) },
	{ "alys_live_objects", "gauge", "Objects allocated and not yet freed or found collected.",
	  offsetof(struct profile_values, m.inuse_objects) },
	{ "alys_stacks", "gauge", "Distinct allocation stacks seen.",
	  offsetof(struct profile_values, m.stacks) },
	{ "alys_gc_heap_growths_total", "counter",
	  "Times the collector added memory to its heap.",
	  offsetof(struct profile_values, m.grows) },
	{ "alys_gc_heap_grown_bytes_total", "counter",
	  "Bytes the collector added to its heap.",
	  offsetof(struct profile_values, m.grown_bytes) },
	{ "alys_gc_pauses_unpushed_total", "counter",
	  "Pauses left out of the pushed pause profiles (more than 65536 in a window).",
	  offsetof(struct profile_values, m.pauses_unpushed) },
};

/* The last memory sample's gauges: a process that has none (no sample
 * yet, or --memory-every 0) has no line. */
static void memory_metrics(struct outbuf *o, size_t n, const struct profile_values *v,
			   const char *const *labels)
{
	static const struct {
		const char *name, *help;
	} g[] = {
		{ "alys_resident_memory_bytes", "The process's RSS (VmRSS) at the last memory sample." },
		{ "alys_resident_memory_part_bytes", "RSS's parts at the last memory sample, "
		  "resident pages each (part: live_heap, free_heap, fiber_stacks, malloc, "
		  "other_anon, files)." },
		{ "alys_gc_heap_bytes", "The collector's heap by its own blocks (state: in_use, "
		  "free, unmapped), resident or not." },
		{ "alys_gc_heap_live_bytes", "Bytes the collector's last collection marked." },
		{ "alys_fibers", "Fibers in the runtime's list at the last memory sample." },
	};

	for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
		http_metric_head(o, g[k].name, "gauge", g[k].help);
		for (size_t i = 0; i < n; i++) {
			const struct trace_memory *m = &v[i].m.memory;
			const char *sep = *labels[i] ? "," : "";
			uint64_t parts[GC_MEM_PARTS];

			if (!v[i].m.has_memory)
				continue;
			switch (k) {
			case 0: case 3: case 4:
				outbuf_printf(o, "%s%s%s%s %" PRIu64 "\n", g[k].name,
					      *labels[i] ? "{" : "", labels[i], *labels[i] ? "}" : "",
					      k == 0 ? m->rss : k == 3 ? m->live : m->fibers);
				break;
			case 1:
				gc_memory_parts(m, parts);
				for (int p = 0; p < GC_MEM_PARTS; p++)
					outbuf_printf(o, "%s{%s%spart=\"%s\"} %" PRIu64 "\n", g[k].name,
						      labels[i], sep, gc_memory_part_keys[p], parts[p]);
				break;
			case 2:
				outbuf_printf(o, "%s{%s%sstate=\"in_use\"} %" PRIu64 "\n"
					      "%s{%s%sstate=\"free\"} %" PRIu64 "\n"
					      "%s{%s%sstate=\"unmapped\"} %" PRIu64 "\n",
					      g[k].name, labels[i], sep, m->heap_in_use,
					      g[k].name, labels[i], sep, m->heap_free,
					      g[k].name, labels[i], sep, m->heap_unmapped);
				break;
			}
		}
	}
}

void http_profile_metrics(struct outbuf *o, size_t n, struct live_profile *const *lps,
			  const char *const *labels, bool wait)
{
	struct profile_values *v = xcalloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		live_profile_metrics(lps[i], wait, &v[i].m);
		v[i].lost = live_profile_counter(lps[i], "ringbuf_drop_event");
		v[i].resent = live_profile_counter(lps[i], "stack_resent");
		v[i].duty_windows = live_profile_counter(lps[i], "duty_windows");
	}
	for (size_t k = 0; k < sizeof(profile_metric) / sizeof(profile_metric[0]); k++) {
		http_metric_head(o, profile_metric[k].name, profile_metric[k].type,
				 profile_metric[k].help);
		for (size_t i = 0; i < n; i++)
			outbuf_printf(o, "%s%s%s%s %" PRIu64 "\n", profile_metric[k].name,
				      *labels[i] ? "{" : "", labels[i], *labels[i] ? "}" : "",
				      *(const uint64_t *)((const char *)&v[i] + profile_metric[k].off));
	}
	http_metric_head(o, "alys_gc_pause_seconds", "histogram",
			 "The collector's stop-the-world pauses: from stopping the world to "
			 "every thread running again.");
	for (size_t i = 0; i < n; i++) {
		const char *sep = *labels[i] ? "," : "";

		for (size_t k = 0; k < LIVE_PAUSE_BUCKETS; k++) {
			outbuf_printf(o, "alys_gc_pause_seconds_bucket{%s%sle=\"", labels[i], sep);
			if (k + 1 == LIVE_PAUSE_BUCKETS)
				outbuf_str(o, "+Inf");
			else
				outbuf_printf(o, "%g", live_pause_le[k]);
			outbuf_printf(o, "\"} %" PRIu64 "\n", v[i].m.pause_le[k]);
		}
		outbuf_printf(o, "alys_gc_pause_seconds_sum%s%s%s %.9f\n", *labels[i] ? "{" : "",
			      labels[i], *labels[i] ? "}" : "", (double)v[i].m.pause_ns / 1e9);
		outbuf_printf(o, "alys_gc_pause_seconds_count%s%s%s %" PRIu64 "\n",
			      *labels[i] ? "{" : "", labels[i], *labels[i] ? "}" : "", v[i].m.pauses);
	}
	memory_metrics(o, n, v, labels);
	http_metric_head(o, "alys_tracer_counter", "counter",
			 "The tracer's counters as the trace records them (docs/FORMAT.md), "
			 "once a second.");
	for (size_t i = 0; i < n; i++)
		live_profile_each_counter(lps[i], each_counter,
					  &(struct counter_line){ o, labels[i] });
	free(v);
}

static enum MHD_Result serve_metrics(struct http_endpoint *h, struct MHD_Connection *c)
{
	struct outbuf o;

	outbuf_init(&o, -1);
	if (h->lp)
		http_profile_metrics(&o, 1, &h->lp, (const char *const[]){ "" }, true);
	if (h->more_metrics)
		h->more_metrics(h->more_ctx, &o);
	http_metric(&o, "alys_http_requests_total", "counter", "Requests to this endpoint.",
		    h->requests);
	http_metric(&o, "alys_http_rejected_total", "counter",
		    "Requests answered with a 4xx status.", h->rejected);
	return send_buf(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", o.buf,
			o.len, false);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct http_endpoint *h = cls;
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	h->requests++;
	if (!head && strcmp(method, MHD_HTTP_METHOD_GET))
		return send_text(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(h, c);
	if (!h->lp)
		return send_text(h, c, MHD_HTTP_NOT_FOUND,
				 "not found: with --all, profiles are pushed (--push); this "
				 "endpoint serves /metrics\n");
	if (!strcmp(url, "/debug/pprof/allocs"))
		return serve_profile(h, c, false, head);
	if (!strcmp(url, "/debug/pprof/heap"))
		return serve_profile(h, c, true, head);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof")) {
		char *page = strdup(index_page);

		return page ? send_buf(c, MHD_HTTP_OK, "text/html; charset=utf-8", page,
				       strlen(page), false) : MHD_NO;
	}
	return send_text(h, c, MHD_HTTP_NOT_FOUND,
			 "not found: this alys-bpf serves /debug/pprof/allocs, /debug/pprof/heap, "
			 "/debug/pprof/ and /metrics\n");
}

/* Paths and arguments are matched as sent: "%2e%2e" or "allocs%00" are no
 * other names for an endpoint, and a number of seconds needs no escape. */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

/* libmicrohttpd's own messages (a client that sent garbage, a timeout):
 * not the user's business while tracing. */
static void quiet_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

struct http_endpoint *http_endpoint_start(const struct sockaddr_storage *sa,
					  struct live_profile *lp, http_metrics_fn more_metrics,
					  void *more_ctx, char *err, size_t errlen)
{
	struct http_endpoint *h = calloc(1, sizeof(*h));
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG;
	uint16_t port = ntohs(sa->ss_family == AF_INET ? ((struct sockaddr_in *)sa)->sin_port
						      : ((struct sockaddr_in6 *)sa)->sin6_port);

	if (!h) {
		snprintf(err, errlen, "--http: out of memory");
		return NULL;
	}
	h->lp = lp;
	h->more_metrics = more_metrics;
	h->more_ctx = more_ctx;
	if (sa->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, port, NULL, NULL, on_request, h,
				MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
				MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL,
				MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "--http: cannot listen on port %u (%s): choose another "
			 "port, or 0 for any free one", port,
			 errno ? strerror(errno) : "libmicrohttpd refused");
		free(h);
		return NULL;
	}
	return h;
}

const char *http_url_host(const struct sockaddr_storage *sa, unsigned port, char *buf,
			  size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, port);
	}
	return buf;
}

unsigned http_endpoint_port(const struct http_endpoint *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);

	return i ? i->port : 0;
}

void http_endpoint_stop(struct http_endpoint *h)
{
	if (!h)
		return;
	h->stopping = true;
	MHD_stop_daemon(h->d);
	free(h);
}
