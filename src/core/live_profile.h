/* SPDX-License-Identifier: MIT */
/*
 * The profile of a trace while it is written: the daemon's /debug/pprof
 * endpoints, /metrics and --interval.
 *
 * The daemon's trace writer hands every record it writes (with or without
 * a file), typed, to live_profile_tool, on the thread that drains the ring
 * buffer. The records build the converter's trace tables (trace_put_*),
 * and each event is counted into per-stack totals as model_build counts
 * it: the same weights, the same frees. Nothing is
 * named there: rendering (another thread, one at a time) copies the totals
 * and the stacks and mappings that arrived since its last copy under a
 * short lock, then builds the converter's model of them and symbolizes
 * without holding it, so that a slow render never stalls the probes'
 * consumer.
 */
#ifndef ALYS_LIVE_PROFILE_H
#define ALYS_LIVE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/outbuf.h"
#include "profile/trace.h"

struct live_profile;

/* name: how messages name the trace ("pid 1234"). */
struct live_profile *live_profile_new(const char *name);
void live_profile_free(struct live_profile *lp);

/* The trace writer's tap (ctx: the live profile). A record the trace
 * refuses is said on stderr, once: the profile stops counting there, and
 * later records are ignored (the trace file is not affected). */
extern const struct trace_tool live_profile_tool;

/*
 * A reader wants what the ring buffer holds now (so that a profile ends
 * when it is asked for, not at the feeding thread's next pass): the wake
 * fd becomes readable; the feeding thread then checks live_profile_wanted,
 * drains the ring buffer, writes the counters and calls
 * live_profile_caught_up. Readers wait a
 * second at most, and not at all after live_profile_detached.
 */
int live_profile_wake_fd(const struct live_profile *lp);
bool live_profile_wanted(struct live_profile *lp);
void live_profile_caught_up(struct live_profile *lp);
void live_profile_detached(struct live_profile *lp);

/* Totals at one moment: what a delta subtracts (?seconds=N). */
struct live_totals;
struct live_totals *live_profile_totals(struct live_profile *lp);
void live_totals_free(struct live_totals *tot);

/* The profile now, minus `before` when given (every value, as Go's delta
 * profiles), as gzipped pprof; heap: inuse_space first. */
void live_profile_pprof(struct live_profile *lp, const struct live_totals *before, bool heap,
			struct outbuf *o);
/* A pushed window (agent/pusher.h), as two gzipped pprofs: alloc, its
 * allocations over [start, end] (before NULL: since the trace's start),
 * stamped start with a duration; inuse, what is in use at end, stamped end
 * without one (a server takes a profile with a duration for a delta).
 * Each within max_samples samples and max_bytes before compression (0: no
 * limit), the smallest stacks added up as "[other stacks]". */
struct window_profiles {
	struct outbuf alloc, inuse;	/* initialized by the caller */
	struct outbuf pauses;		/* the collector's pauses by trigger (PPROF_PAUSES) */
	uint64_t start_unix_ns, end_unix_ns;
	uint32_t samples_cut;		/* stacks added up into "[other stacks]" */
	size_t alloc_samples, inuse_samples;	/* 0: nothing to send */
	size_t pause_samples;
};
struct window_limits {
	uint32_t max_samples;
	size_t max_bytes;
};
/* Returns the totals at end, the next window's before; or NULL, with
 * nothing written, when no --duty window saw the period (unless last): it
 * then belongs to the next, so that windows stay unbiased. */
struct live_totals *live_profile_window(struct live_profile *lp, const struct live_totals *before,
				       bool last, const struct window_limits *lim,
				       struct window_profiles *out);

/* The top sites by live bytes, as --interval prints them: on the feeding
 * thread. */
void live_profile_print_sites(struct live_profile *lp, FILE *out, unsigned top,
			      double elapsed_s);

/* The pause histogram's upper bounds, in seconds (Prometheus's le), the
 * last +Inf. */
#define LIVE_PAUSE_BUCKETS 12
/* Pauses a window keeps for its profile, the rest counted only. */
#define LIVE_WINDOW_PAUSES 65536
extern const double live_pause_le[LIVE_PAUSE_BUCKETS];

struct live_metrics {
	uint64_t events;		/* event records read (frees included) */
	/* the collector's stop-the-world pauses: how many at most each
	 * bound (cumulative), their number and their sum */
	uint64_t pause_le[LIVE_PAUSE_BUCKETS];
	uint64_t pauses, pause_ns;
	struct trace_memory memory;	/* the last memory sample */
	bool has_memory;
	uint64_t grows, grown_bytes;	/* the collector's heap growths */
	uint64_t pauses_unpushed;	/* beyond LIVE_WINDOW_PAUSES in a window */
	uint64_t alloc_objects, alloc_space;	/* estimated, since attach */
	uint64_t inuse_objects, inuse_space;	/* not given back */
	uint64_t stacks;
	bool failed;			/* a record could not be read */
};
/* wait: after the feeding thread caught up (a second at most), as a
 * profile is; else as of the last record read, without waiting. */
void live_profile_metrics(struct live_profile *lp, bool wait, struct live_metrics *out);

/* The tracer's counters as the last counters record gave them: calls
 * fn(ctx, name, value) for each. */
void live_profile_each_counter(struct live_profile *lp,
			       void (*fn)(void *ctx, const char *name, uint64_t value),
			       void *ctx);

/* One of them by name; 0 when it was never recorded. */
uint64_t live_profile_counter(struct live_profile *lp, const char *name);

#endif /* ALYS_LIVE_PROFILE_H */
