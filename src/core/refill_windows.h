/* SPDX-License-Identifier: MIT */
/*
 * The refill probes' links and, with --duty, their windows: attached at a
 * random place in each period (duty_cycle.c) on a thread of their own,
 * opened for the BPF program as soon as they are, closed and detached in
 * the background (link_reaper.c) at the window's end. An attach can take
 * long while other processes' windows attach and detach: with nine busy
 * Crystal processes and perf uprobes it took 50-800 ms (their making and
 * closing queue on one host-wide mutex held across RCU grace periods; the
 * refill probes are uprobe_multi links now, session_link.h: 7 ms at the
 * median), and on the caller's thread it held up every session's ring
 * buffer (the agent's main loop). The collector's byte count is read as
 * each window opens and closes (gc_count.c): the windows' share of it is
 * what the converter scales the events' weights by.
 */
#ifndef ALYS_REFILL_WINDOWS_H
#define ALYS_REFILL_WINDOWS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "alys_events.h"
#include "core/duty_cycle.h"
#include "gc/gc_count.h"
#include "core/link_reaper.h"

struct bpf_link;

/* Attaches the refill probes (with the GC_realloc one if with_realloc),
 * filling links and *n. */
typedef int (*refill_attach_fn)(void *ctx, bool with_realloc, struct probe_link *links,
				int *n);

struct refill_windows {
	/* Set by the tracer. */
	unsigned duty_pct;		/* 100: attached all along */
	bool launched;			/* the target was launched for the trace */
	refill_attach_fn attach;
	void *attach_ctx;
	__u64 *bpf_from, *bpf_until;	/* the BPF program's window (struct alys_sess) */
	struct gc_count count;

	struct duty_cycle duty;
	struct probe_link links[LINK_REAPER_MAX];	/* the attacher's while it runs */
	int nlinks;
	pthread_t attacher;
	bool attaching;			/* the attacher runs */
	bool attach_with_realloc;
	int attach_err;			/* its result */
	bool detach_due;		/* the window ended while it ran */
	struct link_reaper reaper;
	bool open, has_realloc;
	uint64_t start_bytes;		/* the count as the window opened */
	uint64_t trace_start_bytes;
	uint64_t bytes_in;		/* its growth while windows were open */
	uint64_t bytes_in_realloc;	/* ... those that probed GC_realloc */
};

/* Attaches for good (100%), or starts the windows. -1: cannot attach, or
 * the collector's count cannot be read (errno set). */
int refill_windows_start(struct refill_windows *rw, uint64_t now);
/* One step at time now: milliseconds until the next (at most 50), -1 if
 * attaching failed. */
int refill_windows_step(struct refill_windows *rw, uint64_t now);
/* Reads the count while a window is open: a target that exits mid-window
 * is read no more. */
void refill_windows_poll(struct refill_windows *rw);
/* Closes the window, detaches, waits for the links to go. */
void refill_windows_stop(struct refill_windows *rw);
/* The collector's bytes since the start, inside windows, inside those with
 * the GC_realloc probe. */
void refill_windows_totals(struct refill_windows *rw, uint64_t *all, uint64_t *in,
			   uint64_t *in_realloc);

#endif
