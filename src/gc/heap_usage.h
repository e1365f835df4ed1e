/* SPDX-License-Identifier: MIT */
/*
 * What the collector's heap holds, from a walk of its block headers in a
 * running target (heap_walk.h): bytes in use, of them the objects marked
 * by the last collection (live), free chunks kept mapped or given back to
 * the system, and where the mapped blocks are (their resident pages are
 * the heap's share of RSS). Mark bytes are the last collection's until
 * the next one clears them: a walk that crosses a collection's mark phase
 * reads some of them cleared (the caller compares GC_gc_no around it).
 */
#ifndef ALYS_HEAP_USAGE_H
#define ALYS_HEAP_USAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gc/gc_layout.h"

struct heap_range {
	uint64_t start, end;
};

/* qsort's order of heap_ranges: by start. */
int heap_range_cmp(const void *a, const void *b);

struct heap_usage {
	uint64_t in_use;	/* bytes of in-use blocks */
	uint64_t live;		/* of those, objects marked by the last collection */
	uint64_t free_mapped;	/* free chunks the collector keeps mapped */
	uint64_t unmapped;	/* free chunks it gave back to the system */
	uint64_t blocks, unreadable;
	struct heap_range *ranges;	/* the mapped blocks, sorted, merged */
	size_t nr_ranges, cap_ranges;
	uint64_t walk_ns;
};

/* Walks pid's heap (bias: the load bias of the object holding libgc) into
 * u, whose ranges are reused from call to call. 0, or -1 with the reason
 * in err. */
int heap_usage_read(pid_t pid, const struct gc_layout *l, uint64_t bias,
		    struct heap_usage *u, char *err, size_t errlen);
void heap_usage_free(struct heap_usage *u);

#endif
