/* SPDX-License-Identifier: MIT */
/*
 * Where the target's memory went: its memory samples (FORMAT.md record
 * 14) at RSS's peak and at the last one, and the collector's heap growths
 * (record 15) by the site whose allocation needed them.
 */
#ifndef ALYS_GC_MEMORY_H
#define ALYS_GC_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "profile/model.h"

struct gc_grow_site {
	const struct model_site *site;
	uint64_t bytes, n;
};

struct gc_memory_summary {
	const struct trace_memory *peak, *last;	/* NULL: no samples */
	uint64_t grown_bytes;
	size_t n_grows;
	struct gc_grow_site *sites;	/* by bytes grown, the most first */
	size_t nr_sites;
};

/* m built (its symbolizer names the growths' sites). */
void gc_memory_summarize(struct model *m, struct gc_memory_summary *s);
void gc_memory_free(struct gc_memory_summary *s);

/* RSS's parts in a sample, as the report and the timeline draw them, in
 * order; their sum is the sample's resident pages as pagemap saw them. */
enum { GC_MEM_PARTS = 6 };
extern const char *const gc_memory_part_names[GC_MEM_PARTS];
extern const char *const gc_memory_part_keys[GC_MEM_PARTS];	/* /metrics' part="" */
void gc_memory_parts(const struct trace_memory *s, uint64_t parts[GC_MEM_PARTS]);

#endif
