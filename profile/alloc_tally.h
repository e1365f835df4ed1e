/* SPDX-License-Identifier: MIT */
/*
 * Counting events as they come: the allocations, the objects and bytes
 * they stand for, and the frees that give them back, per bucket (a stack,
 * or the kind of an event whose stack was lost). The one accumulator of
 * model_build's pass over a file and of the daemon's live profile, so
 * that both count alike; it keeps the one table of blocks counted and not
 * given back (counted_blocks).
 */
#ifndef ALYS_ALLOC_TALLY_H
#define ALYS_ALLOC_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alys_format.h"
#include "profile/counted_blocks.h"
#include "profile/trace.h"

struct alloc_stats {
	uint64_t alloc_objects, alloc_space;
	uint64_t inuse_objects, inuse_space;
};

/* An allocation counted (allocated and in use), and given back. */
static inline void alloc_stats_count(struct alloc_stats *s, uint64_t objects, uint64_t space)
{
	s->alloc_objects += objects;
	s->alloc_space += space;
	s->inuse_objects += objects;
	s->inuse_space += space;
}

static inline void alloc_stats_drop(struct alloc_stats *s, uint64_t objects, uint64_t space)
{
	s->inuse_objects -= objects;
	s->inuse_space -= space;
}

static inline void alloc_stats_add(struct alloc_stats *sum, const struct alloc_stats *s)
{
	sum->alloc_objects += s->alloc_objects;
	sum->alloc_space += s->alloc_space;
	sum->inuse_objects += s->inuse_objects;
	sum->inuse_space += s->inuse_space;
}

/* Whether e adds a block: malloc, malloc_atomic, a realloc that did not
 * fail and was not to size 0. */
bool event_allocates(const struct trace_event *e);
/* Whether e gives back the block it replaces: a free, a realloc that did
 * not fail. */
bool event_releases(const struct trace_event *e);

/* Objects an allocation event stands for: weight / size rounded, at least 1
 * (1 when every call is recorded). */
uint64_t event_objects(const struct trace_event *e);

/* Buckets: the trace's stacks (1..nr_stacks), then lost stacks of kinds
 * 1..3; bucket 0 is none. */
static inline size_t model_nr_buckets(const struct trace *t)
{
	return t->nr_stacks + 1 + ALYS_KIND_REALLOC;
}

/* The bucket of an event with this stack (index + 1; 0: none) and kind. */
size_t trace_bucket(const struct trace *t, uint32_t stack, unsigned int kind);

struct alloc_tally {
	struct counted_blocks counted;	/* bucket: a stack, or ALLOC_TALLY_LOST + kind */
	struct alloc_stats *by_stack;	/* [1..nr_stacks] */
	uint8_t *realloc;		/* [1..nr_stacks]: a GC_realloc was counted there */
	size_t nr_stacks, cap_realloc;
	struct alloc_stats lost[ALYS_KIND_REALLOC + 1];
};

void alloc_tally_init(struct alloc_tally *at);
void alloc_tally_free(struct alloc_tally *at);

/* e (linked by the trace's reader) gives back the block it replaces, if
 * it was counted and not given back yet: true, with that block in *old
 * (its bucket as alloc_tally_bucket gives it for the trace). */
bool alloc_tally_release(struct alloc_tally *at, const struct trace *t,
			 const struct trace_event *e, struct counted_block *old);
/* e's block counted in its bucket (trace_bucket), which it returns. */
size_t alloc_tally_add(struct alloc_tally *at, const struct trace *t,
		       const struct trace_event *e);

/* fn on each block counted and not given back, in no order (its bucket as
 * trace_bucket numbers it for t). */
void alloc_tally_each_held(const struct alloc_tally *at, const struct trace *t,
			   void (*fn)(void *ctx, const struct counted_block *blk), void *ctx);

/* Bucket b's totals (zero when nothing was counted there). */
struct alloc_stats alloc_tally_stats(const struct alloc_tally *at, const struct trace *t,
				     size_t b);
/* Whether bucket b (a stack's) counted a GC_realloc event. */
bool alloc_tally_realloc(const struct alloc_tally *at, size_t b);

#endif
