/* SPDX-License-Identifier: MIT */
/*
 * Where a traced process's resident memory is, read from outside every
 * --memory-every seconds into a memory record (FORMAT.md record 14):
 * VmRSS, and its parts measured apart, page by page (/proc/PID/pagemap):
 * the collector's mapped blocks (found by a walk of its block headers),
 * the listed fibers' stacks, C malloc's brk heap, other anonymous memory,
 * file-backed pages. The walk also gives the collector's own figures: the
 * bytes its last collection marked, its blocks in use, free, given back.
 * A sample's cost sets how long until the next (at most a 20th of the
 * time), so a huge heap is walked less often, never more than that.
 */
#ifndef ALYS_MEM_SAMPLER_H
#define ALYS_MEM_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gc/fiber_layout.h"
#include "gc/gc_count.h"
#include "gc/heap_usage.h"
#include "profile/trace.h"

struct gc_probes;
struct trace_writer;
struct fiber_entry;

struct mem_sampler {
	pid_t pid;
	const struct gc_probes *gp;
	struct gc_count gc;
	int pagemap;			/* -1: closed, or no sampling */
	uint64_t every_ns, next_ns;
	struct heap_usage hu;
	struct fiber_layout fl;
	uint64_t fiber_list;		/* 0: no fibers to read */
	struct fiber_entry *fibers;	/* the last list read whole */
	size_t nr_fibers;
	struct trace_memory last;	/* the last sample (the reader's figures) */
	uint64_t samples, cost_ns;
	bool opened, verbose;
	bool said_fibers, said_heap;	/* a failure told once */
};

/* every_ns 0: no sampling. Never fails: a part it cannot read stays 0,
 * and -v says why. */
void mem_sampler_init(struct mem_sampler *ms, pid_t pid, const struct gc_probes *gp,
		      uint64_t every_ns, uint64_t now, bool verbose);
/* A sample when one is due (or, with force, now): 1 when one was written,
 * 0 when none was due, -1 when the process is gone. */
int mem_sampler_step(struct mem_sampler *ms, uint64_t now, bool force,
		     struct trace_writer *w);
/* Also of a zeroed sampler never started. */
void mem_sampler_free(struct mem_sampler *ms);

#endif
