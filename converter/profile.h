/* SPDX-License-Identifier: MIT */
/*
 * Allocation totals per recorded stack, shared by the aggregated outputs
 * (folded stacks, pprof, flamegraph, report), after the event filters
 * (--time, --type).
 *
 * Every allocation event (malloc, malloc_atomic, realloc) stands for
 * `weight` bytes and weight/size objects, so a sampled trace adds up to
 * unbiased totals. "In use" is what was allocated and not given back by an
 * explicit GC_free or GC_realloc in the trace: blocks the collector reclaims
 * on its own are not seen yet, so in-use figures are an upper bound.
 */
#ifndef ALYS_CONV_PROFILE_H
#define ALYS_CONV_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize.h"
#include "trace.h"

struct event_filter {
	bool has_from, has_to;
	int64_t from_ns, to_ns;		/* since the trace start, inclusive */
	const char *type;		/* Crystal type constructed, or NULL */
};

struct alloc_stats {
	uint64_t alloc_objects, alloc_space;
	uint64_t inuse_objects, inuse_space;
};

/*
 * Buckets: 1..nr_stacks are the trace's stacks (bucket b is stacks[b - 1]);
 * then one per allocation kind for events whose stack was lost. Bucket 0 is
 * unused.
 */
struct profile {
	const struct trace *t;
	struct symbolizer *sym;
	struct event_filter filter;
	uint32_t depth;			/* frames kept per stack, innermost; 0: all */

	size_t nr_buckets;
	struct alloc_stats *stats;	/* per bucket */
	struct alloc_stats total;
	uint64_t alloc_events, free_events, frees_matched;

	char **type_of;			/* per bucket, lazily; "" when none */
	const struct sym_frame **site_of; /* per bucket, lazily; NULL when none */
	uint8_t *classified;		/* per bucket: type_of and site_of are set */
	uint8_t *selected;		/* per event: enum selection */

	/* scratch for profile_frames() */
	const struct sym_frame **frames;
	size_t cap_frames;
	struct sym_frame lost[2];
	struct sym_frame truncated;	/* "[truncated]" */
};

enum selection {
	SEL_NO,
	SEL_SHOWN,		/* passes the filters, allocates nothing */
	SEL_COUNTED,		/* an allocation counted in stats */
	SEL_GIVEN_BACK,		/* ... and freed or reallocated since */
};

void profile_init(struct profile *p, const struct trace *t, struct symbolizer *sym,
		  const struct event_filter *filter, uint32_t depth);
/* Add up the selected events (reads all events once). */
void profile_build(struct profile *p);
void profile_free(struct profile *p);

/* Whether event i passes the filters (computed by profile_build). */
static inline bool profile_selected(const struct profile *p, size_t i)
{
	return p->selected[i];
}

/* Whether e adds a block: malloc, malloc_atomic, a realloc that did not
 * fail and was not to size 0. */
bool event_allocates(const struct trace_event *e);

/* Objects an allocation event stands for: weight / size rounded, at least 1
 * (1 when every call is recorded). */
uint64_t event_objects(const struct trace_event *e);

size_t profile_bucket_of(const struct profile *p, const struct trace_event *e);

/*
 * The frames of bucket b, innermost first, inlined frames flattened in,
 * limited to the innermost `depth` recorded addresses. A lost stack gives
 * "GC_malloc" (or the kind's GC function) and "[stack lost]"; a stack the
 * tracer cut at its frame limit ends in "[truncated]" instead of posing as
 * a root. Valid until the next call.
 */
size_t profile_frames(struct profile *p, size_t b, const struct sym_frame ***frames);

/* Bucket b's stack was cut at the tracer's frame limit (and not by --depth):
 * its outermost frame is "[truncated]". */
bool profile_truncated(const struct profile *p, size_t b);

/*
 * The Crystal type bucket b constructs ("" if none): the innermost
 * T::new, T#initialize or T.allocate frame with only allocator frames
 * (GC_*, malloc wrappers, Pointer.malloc) below it. Over the whole stack.
 */
const char *profile_type(struct profile *p, size_t b);

/*
 * The site of stack st by the one rule of both programs (site_rule_is_site,
 * lib/crystal_names.h), for every output (report, leaks, timeline, diff,
 * census): NULL when only allocator frames are left; the type it constructs
 * goes to type ("" if none). A site is known by its frame's name in every
 * table (sites_name_stack), so totals per site agree.
 */
const struct sym_frame *stack_site(const struct trace *t, struct symbolizer *sym,
				   const struct trace_stack *st, char *type, size_t type_len);

/* The allocation site of bucket b: its innermost frame that is neither an
 * allocator frame nor a constructor of that type; NULL if none. */
const struct sym_frame *profile_site(struct profile *p, size_t b);

/* The GC function name of an allocation kind. */
const char *kind_function(unsigned int kind);

/* What inuse_* means for this trace, from its liveness mode. */
const char *inuse_meaning(const struct trace *t);

#endif /* ALYS_CONV_PROFILE_H */
