/* SPDX-License-Identifier: MIT */
/*
 * The collector's stop-the-world pauses of a trace (FORMAT.md record 13):
 * each pause's length, whether GC.collect asked for it (GC_gcollect in the
 * collecting thread's stack) or an allocation's slow path did, and the
 * bucket of its stack, whose site the model names as it names allocation
 * sites (allocator frames left out). What the report, pprof --pauses and
 * the daemon's /metrics show of pauses.
 */
#ifndef ALYS_GC_PAUSES_H
#define ALYS_GC_PAUSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/model.h"

struct gc_pause_row {
	const struct trace_pause *p;
	uint64_t ns;			/* stopped .. restarted */
	uint64_t collection_ns;		/* the collection around it; 0: not measured */
	size_t bucket;			/* the model's: its stack, or a lost stack's */
	bool explicit_gc;		/* GC.collect (GC_gcollect) */
};

struct gc_pause_summary {
	struct gc_pause_row *rows;	/* in trace order */
	size_t n, n_explicit;
	uint64_t total_ns, max_ns;
	size_t n_collections;		/* pauses whose collection was measured */
	uint64_t collection_ns;		/* those collections, in all */
	uint64_t collection_pause_ns;	/* their pauses, in all */
	uint64_t p50_ns, p90_ns, p99_ns;	/* nearest rank */
};

/* m built (its symbolizer names the stacks' frames). */
void gc_pauses_summarize(struct model *m, struct gc_pause_summary *s);
void gc_pauses_free(struct gc_pause_summary *s);

/* The q-quantile (0 < q <= 1) of n sorted values, by nearest rank. */
uint64_t gc_pauses_quantile(const uint64_t *sorted, size_t n, double q);

/* m's buckets hold the pauses instead of allocations (pprof --pauses):
 * alloc_objects the pauses each stack triggered, alloc_space their
 * nanoseconds; the in-use values are zero. */
void gc_pauses_as_buckets(struct model *m, const struct gc_pause_summary *s);

#endif
