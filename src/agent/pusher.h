/* SPDX-License-Identifier: MIT */
/*
 * --push: every window (--push-every), each session's profile of that
 * window (live_profile_window: allocations in it, what is in use at its
 * end) goes to a Pyroscope or Parca server (push_api.h) over libcurl.
 *
 * Two threads of its own, so that tracing never waits for the network: a
 * renderer that makes the windows' profiles into requests, and a sender
 * that posts them in order. A request that fails for a reason that may
 * pass (no connection, a timeout, 408, 429, 5xx) is retried with backoff
 * (1 s doubling to 30 s) while newer ones queue; a full queue
 * (--push-queue) drops its oldest, and a window older than the servers take
 * is dropped before it is sent. A 4xx rejection is not retried. All
 * counted (push_stats), said on stderr when it starts and when it ends.
 *
 * What the servers refuse, read in their code (DESIGN.md, "Pushes"), kept
 * here: a window is two profiles (its allocations with a duration, the
 * in-use snapshot at its end without: Parca takes any profile with a
 * duration for a delta), ids 1..n in order, no all-zero sample, label
 * values non-empty and at most 2048 bytes, a profile at most 16000 samples
 * and 2 MiB before compression (Pyroscope's defaults: its rate limit's
 * burst refuses a bigger one with 429, forever), stamped within the last
 * hour (Pyroscope refuses older ones with 400).
 */
#ifndef ALYS_PUSHER_H
#define ALYS_PUSHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct live_profile;
struct push_label;

#define PUSH_MAX_HEADERS 8
/* Pyroscope refuses a profile stamped more than 1 h before its clock
 * (-validation.reject-older-than); a few minutes spare for the clocks. */
#define PUSH_MAX_AGE_S (55 * 60)

struct push_opts {
	const char *url;		/* the server: http(s)://HOST[:PORT][/PREFIX] */
	const char *api;		/* push_api.h: "pyroscope" or "parca"; NULL: default */
	unsigned every_s;		/* window length, seconds */
	unsigned queue;			/* requests held while the server fails */
	const char *headers[PUSH_MAX_HEADERS];	/* "Name: value" */
	unsigned nheaders;
	const char *token_file;		/* bearer token, first line */
	const char *hostname;		/* label; NULL: gethostname */
	bool quiet, verbose;
};

struct push_stats {
	uint64_t windows;	/* profiles made */
	uint64_t sent;		/* accepted by the server (2xx) */
	uint64_t attempts_failed;	/* tries that failed (retried or not) */
	uint64_t rejected;	/* answered 4xx (not 408/429), or not by the API: dropped */
	uint64_t dropped;	/* pushed out of a full queue, or left at exit */
	uint64_t expired;	/* older than the servers take (PUSH_MAX_AGE_S): dropped */
	uint64_t windows_cut;	/* windows whose smallest stacks went as one sample */
	uint64_t queued;	/* waiting now */
	uint64_t queued_bytes;
	uint64_t bytes_sent;
};

struct pusher;
struct push_source;

/* Checks the options (the token file, the URL's scheme): NULL with err. */
struct pusher *pusher_start(const struct push_opts *o, char *err, size_t errlen);
#define PUSH_MAX_EXTRA_LABELS 4

/* A session's live profile, pushed each window from now on as service
 * (labels service_name, hostname, pid, and the n extra ones: its
 * container's, copied). */
struct push_source *pusher_add(struct pusher *p, struct live_profile *lp, pid_t pid,
			       const char *service, const struct push_label *extra, size_t n);
/* The session ended: its last window is pushed, then lp is freed (the
 * pusher owns it from here). */
void pusher_remove(struct pusher *p, struct push_source *src, struct live_profile *lp);
void pusher_stats(struct pusher *p, struct push_stats *st);
/* The last windows of every source, then up to wait_s seconds to send
 * what is queued; the rest is dropped and counted. */
void pusher_stop(struct pusher *p, unsigned wait_s);

#endif
