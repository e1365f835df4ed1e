// SPDX-License-Identifier: MIT
#include "profile/alloc_tally.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

/* A lost stack's bucket as the tally keeps it: the trace's stacks grow
 * while a live trace is counted, so trace_bucket's numbers for lost
 * stacks move; these do not. */
#define LOST (UINT32_MAX - 8)

/*
 * An allocation event adds a block. A GC_realloc that returned NULL for a
 * non-zero size (failed: the old block stays) or was asked for 0 bytes (a
 * free) adds none.
 */
bool event_allocates(const struct trace_event *e)
{
	if (e->kind == ALYS_KIND_MALLOC || e->kind == ALYS_KIND_MALLOC_ATOMIC)
		return true;
	return e->kind == ALYS_KIND_REALLOC && e->addr && e->size;
}

/* A free, or a realloc that did not fail, gives back the block it replaces. */
bool event_releases(const struct trace_event *e)
{
	return e->kind == ALYS_KIND_FREE || (e->kind == ALYS_KIND_REALLOC && !(!e->addr && e->size));
}

uint64_t event_objects(const struct trace_event *e)
{
	if (!e->size || e->weight <= e->size)
		return 1;
	return (e->weight + e->size / 2) / e->size;
}

size_t trace_bucket(const struct trace *t, uint32_t stack, unsigned int kind)
{
	if (stack && t->stacks[stack - 1].nr)
		return stack;
	return t->nr_stacks + (kind <= ALYS_KIND_REALLOC ? kind : ALYS_KIND_MALLOC);
}

void alloc_tally_init(struct alloc_tally *at)
{
	memset(at, 0, sizeof(*at));
	counted_blocks_init(&at->counted);
}

void alloc_tally_free(struct alloc_tally *at)
{
	counted_blocks_free(&at->counted);
	free(at->by_stack);
	free(at->realloc);
	memset(at, 0, sizeof(*at));
}

static struct alloc_stats *stats_of(struct alloc_tally *at, uint32_t bucket)
{
	return bucket >= LOST ? &at->lost[bucket - LOST] : &at->by_stack[bucket];
}

/* The tally's bucket as trace_bucket numbers it for t now. */
static size_t bucket_now(const struct trace *t, uint32_t bucket)
{
	return bucket >= LOST ? t->nr_stacks + (bucket - LOST) : bucket;
}

bool alloc_tally_release(struct alloc_tally *at, const struct trace *t,
			 const struct trace_event *e, struct counted_block *old)
{
	if (!event_releases(e) || !counted_blocks_take(&at->counted, e->prev_id, old))
		return false;
	alloc_stats_drop(stats_of(at, old->bucket), old->objects, old->weight);
	old->bucket = (uint32_t)bucket_now(t, old->bucket);
	return true;
}

size_t alloc_tally_add(struct alloc_tally *at, const struct trace *t,
		       const struct trace_event *e)
{
	uint64_t objs = event_objects(e);
	size_t b = trace_bucket(t, e->stack, e->kind);
	uint32_t kept = (uint32_t)b;

	if (b > t->nr_stacks) {
		kept = LOST + (uint32_t)(b - t->nr_stacks);
	} else if (b >= at->nr_stacks) {
		size_t cap = at->nr_stacks;

		at->by_stack = grow_array(at->by_stack, &cap, t->nr_stacks + 1,
					  sizeof(*at->by_stack));
		memset(&at->by_stack[at->nr_stacks], 0,
		       (cap - at->nr_stacks) * sizeof(*at->by_stack));
		at->realloc = grow_array(at->realloc, &at->cap_realloc, cap, 1);
		memset(&at->realloc[at->nr_stacks], 0, cap - at->nr_stacks);
		at->nr_stacks = cap;
	}
	if (kept < LOST && e->kind == ALYS_KIND_REALLOC)
		at->realloc[kept] = 1;
	counted_blocks_add(&at->counted, e->id, &(struct counted_block){
		.weight = e->weight, .objects = objs, .bucket = kept, .tid = e->tid,
		.gc_no = e->gc_no });
	alloc_stats_count(stats_of(at, kept), objs, e->weight);
	return b;
}

struct each_held {
	const struct trace *t;
	void (*fn)(void *ctx, const struct counted_block *blk);
	void *ctx;
};

static void held_one(void *ctx, const struct counted_block *blk)
{
	const struct each_held *h = ctx;
	struct counted_block b = *blk;

	b.bucket = (uint32_t)bucket_now(h->t, b.bucket);
	h->fn(h->ctx, &b);
}

void alloc_tally_each_held(const struct alloc_tally *at, const struct trace *t,
			   void (*fn)(void *ctx, const struct counted_block *blk), void *ctx)
{
	struct each_held h = { t, fn, ctx };

	counted_blocks_each(&at->counted, held_one, &h);
}

struct alloc_stats alloc_tally_stats(const struct alloc_tally *at, const struct trace *t,
				     size_t b)
{
	if (b > t->nr_stacks)
		return b - t->nr_stacks <= ALYS_KIND_REALLOC ? at->lost[b - t->nr_stacks]
							      : (struct alloc_stats){ 0 };
	return b < at->nr_stacks ? at->by_stack[b] : (struct alloc_stats){ 0 };
}

bool alloc_tally_realloc(const struct alloc_tally *at, size_t b)
{
	return b < at->nr_stacks && at->realloc[b];
}
