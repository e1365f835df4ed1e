/* SPDX-License-Identifier: MIT */
/*
 * --heap-snapshot: stop a running process once, copy what the collector
 * itself would scan (its heap blocks, the data and bss of the executable
 * and its libraries, every thread's stack and registers), resume it, and
 * write the copy as a trace (FORMAT.md records 9-11). The analysis is the
 * converter's (-f heap), offline: the process is stopped only for copying.
 */
#ifndef ALYS_HEAP_SNAPSHOT_H
#define ALYS_HEAP_SNAPSHOT_H

#include <stdint.h>
#include <sys/types.h>

struct tracer_opts;

struct heap_snapshot_stats {
	uint64_t ts_ns;			/* CLOCK_MONOTONIC when the process stopped */
	uint64_t stop_ns;		/* how long it stayed stopped */
	uint64_t blocks, heap_bytes;	/* heap blocks copied, their bytes */
	uint64_t roots, root_bytes;	/* root regions copied, their bytes */
	uint64_t unreadable;		/* headers or blocks that could not be read */
	uint64_t block_size;		/* the collector's HBLKSIZE */
	uint8_t all_interior_pointers;	/* GC_all_interior_pointers */
	uint32_t threads;
	uint32_t fibers;		/* suspended fibers' stacks copied */
	uint32_t fibers_listed;		/* fibers in the runtime's list */
};

/* alys-bpf --heap-snapshot --pid PID: the process exit status to use. */
int heap_snapshot_run(const struct tracer_opts *o);

/* One snapshot of pid into w (records 9-11), for --heap-snapshot and for a
 * tracing session sent SIGUSR1. 0, or -1 with the cause in err. */
struct gc_probes;
struct trace_writer;
int heap_snapshot_take(pid_t pid, const struct gc_probes *gp, struct trace_writer *w,
		       struct heap_snapshot_stats *st, char *err, size_t errlen);
/* The one line alys-bpf says after a snapshot. */
void heap_snapshot_say(pid_t pid, const struct heap_snapshot_stats *st, const char *where);

#endif
