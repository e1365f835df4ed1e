/* SPDX-License-Identifier: MIT */
/*
 * The one analysis every output renders: built once per trace, in one pass
 * over its events (model_build), after the event filters (--time, --type).
 *
 *  - buckets: allocation totals per recorded stack (folded stacks, pprof,
 *    flamegraph, the report's stacks), each classified once by the one
 *    site rule of both programs (site_rule_is_site, lib/crystal_names.h)
 *    into a site and the Crystal type it constructs (its constructor
 *    frame, else, with_code_types, the type id its allocation call stores:
 *    type_ids.h);
 *  - sites and types: the same totals by site and by type (report, leaks,
 *    diff, census), and each site's live bytes at every snapshot (after
 *    each collection read; without liveness, when allocations start
 *    carrying a new gc_no), from which come leak suspects and the
 *    timeline;
 *  - threads: allocated and in-use bytes by allocating thread.
 *
 * Every allocation event (malloc, malloc_atomic, realloc) stands for
 * `weight` bytes and weight/size objects, so a sampled trace adds up to
 * unbiased totals. "In use" is what was allocated and not given back by a
 * free in the trace: called (GC_free, GC_realloc) or inferred from the
 * collector's marks or address reuse (the trace's liveness mode says which,
 * inuse_meaning()).
 */
#ifndef ALYS_CONV_MODEL_H
#define ALYS_CONV_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/str_table.h"
#include "profile/alloc_tally.h"
#include "profile/symbolize.h"
#include "profile/trace.h"
#include "profile/type_ids.h"

struct event_filter {
	bool has_from, has_to;
	int64_t from_ns, to_ns;		/* since the trace start, inclusive */
	const char *type;		/* Crystal type constructed, or NULL */
};

/* Named "function  file.cr:12" (file:line where DWARF gives it), or
 * "[stack lost]" / "[allocator only]" when it has no frame. */
struct model_site {
	const char *name;
	const struct sym_frame *frame;	/* NULL: no frame beyond the allocator's */
	struct alloc_stats s;		/* allocated, and in use at the end */
	uint64_t allocs, frees;		/* allocation events; how many were given back */
	/* inuse_space at each snapshot since the site's first allocation */
	uint32_t snapshots, rises, falls;
	uint64_t first_live, last_live, peak_live;
	/* Age in collections of what is in use at the end, per object. */
	uint64_t age_sum;
	uint32_t age_max;
	/* Short-lived: found dead by the marks of the first collection after
	 * their allocation (heaptrack's "temporary", alloc-track's "volatile") */
	uint64_t short_objects, short_space;

	uint32_t first_snap;		/* private to model.c */
	bool dirty;
};

struct model_type {
	const char *name;		/* "": no constructor frame */
	struct alloc_stats s;
	uint32_t top_site;		/* its biggest site by bytes (index in sites) */
	uint64_t top_site_bytes;
};

/*
 * Buckets: 1..nr_stacks are the trace's stacks (bucket b is stacks[b - 1]);
 * then one per allocation kind for events whose stack was lost. Bucket 0 is
 * unused.
 */
struct model_bucket {
	struct alloc_stats s;
	uint32_t site, type;		/* indexes into sites and types */
	uint32_t block;			/* what the block is (types): the buffer's
					 * Pointer(X) when a constructor allocates
					 * one, else type */
};

struct model_thread {
	uint32_t tid;
	uint64_t allocs, alloc_space;
	uint64_t inuse_objects, inuse_space;
};

/* A point of the live-bytes series. The last one is the end of the trace,
 * not a collection. */
struct model_snapshot {
	uint64_t ts_ns;			/* monotone: never before the one before */
	uint64_t alloc_space, inuse_space;	/* all sites */
	size_t first_change;		/* its changes: [first_change, next's) */
};

/* A site's totals at a snapshot, recorded where they changed since the
 * site's previous one. */
struct model_change {
	uint32_t site;
	uint64_t alloc_space, inuse_space;
};

struct model {
	const struct trace *t;
	struct symbolizer *sym;
	struct event_filter filter;
	uint32_t depth;			/* frames kept per stack, innermost; 0: all */

	size_t nr_buckets;
	struct model_bucket *buckets;
	struct model_site *sites;	/* sorted by name */
	size_t nr_sites;
	struct model_type *types;	/* by name index; types[0] is "" */
	size_t nr_types;
	struct model_thread *threads;	/* sorted by tid */
	size_t nr_threads;
	struct model_snapshot *snaps;
	size_t nr_snaps, cap_snaps;
	uint32_t collection_snaps;	/* snapshots before the end point */
	struct model_change *changes;
	size_t nr_changes, cap_changes;
	uint32_t last_gc;		/* the last collection known */

	struct alloc_stats total;
	uint64_t alloc_events, free_events, frees_matched;
	uint8_t *stack_shown;		/* per stack: an event shown refers to it */

	struct str_table names;		/* site and type names */
	/* Type ids named from the program's code (with_code_types), which
	 * also name the type of a stack without a constructor frame. */
	bool has_code_types;
	struct type_ids code_types;

	bool keep_allocator_frames;	/* model_first_kept() trims nothing */

	/* scratch for model_frames() */
	const struct sym_frame **frames;
	size_t cap_frames;
	struct sym_frame lost[2];
	struct sym_frame truncated;	/* "[truncated]" */
};

void model_build(struct model *m, const struct trace *t, struct symbolizer *sym,
		 const struct event_filter *filter, uint32_t depth, bool with_code_types);

/*
 * The model of totals counted elsewhere (the daemon's live profile, which
 * counts events as model_build's pass does, as they come): stats[b] for
 * each bucket b < model_nr_buckets(t). Sites and types are classified and
 * summed; there are no snapshots, threads or filters.
 */
void model_from_buckets(struct model *m, const struct trace *t, struct symbolizer *sym,
			const struct alloc_stats *stats, uint32_t depth);

/*
 * As Go's heap profiles start at the allocating function, not in the
 * allocator, every output that draws stacks leaves out their innermost
 * allocator frames (is_allocator_frame: GC_*, __crystal_malloc*,
 * Pointer.malloc...): the addresses that are only such frames, and those
 * inlined at the next address (*skip of its frames), unless nothing else
 * would remain or m->keep_allocator_frames. Returns the first address
 * kept of st's innermost depth (0: all) frames.
 */
uint32_t model_first_kept(struct model *m, const struct trace_stack *st, uint32_t depth,
			  uint32_t *skip);
void model_free(struct model *m);

/* Reads the events again and calls fn for each that passes the filters:
 * an allocation counted, or a free or realloc of such an allocation (with
 * --type; any, without). */
void model_each_shown(const struct model *m, trace_event_fn *fn, void *ctx);

size_t model_bucket_of(const struct model *m, const struct trace_event *e);

static inline const struct model_site *model_site(const struct model *m, size_t b)
{
	return &m->sites[m->buckets[b].site];
}

/* The Crystal type bucket b constructs ("" if none). */
static inline const char *model_type(const struct model *m, size_t b)
{
	return m->types[m->buckets[b].type].name;
}

/* What bucket b's blocks are: an object of model_type(), or the
 * Pointer(X) buffer its constructor allocates ("" if unknown). */
static inline const char *model_block_type(const struct model *m, size_t b)
{
	return m->types[m->buckets[b].block].name;
}

/*
 * The frames of bucket b, innermost first, inlined frames flattened in,
 * limited to the innermost `depth` recorded addresses. A lost stack gives
 * "GC_malloc" (or the kind's GC function) and "[stack lost]"; a stack the
 * tracer cut at its frame limit ends in "[truncated]" instead of posing as
 * a root. Valid until the next call.
 */
size_t model_frames(struct model *m, size_t b, const struct sym_frame ***frames);

/* Bucket b's stack was cut at the tracer's frame limit (and not by --depth):
 * its outermost frame is "[truncated]". */
bool model_truncated(const struct model *m, size_t b);

/* The point where the most bytes were in use (the first of equals):
 * after a collection, or the end (what the trace left in use), the points
 * at which liveness is known. NULL only for a model of nothing. */
const struct model_snapshot *model_peak(const struct model *m);

/* The site named name, or NULL. */
const struct model_site *model_find_site(const struct model *m, const char *name);

/* The GC function name of an allocation kind. */
const char *kind_function(unsigned int kind);

/* What inuse_* means for this trace, from its liveness mode. */
const char *inuse_meaning(const struct trace *t);

#endif /* ALYS_CONV_MODEL_H */
