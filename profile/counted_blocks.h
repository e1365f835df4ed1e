/* SPDX-License-Identifier: MIT */
/*
 * The allocations counted and not given back yet, by event id: the one
 * table of live blocks that model_build and the daemon's live profile both
 * keep. A free or realloc gives back its prev_id's block; a slot given back
 * is reused.
 */
#ifndef ALYS_COUNTED_BLOCKS_H
#define ALYS_COUNTED_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/u64_table.h"

/* What counting needs of an allocation to take it back. */
struct counted_block {
	uint64_t weight, objects;
	uint32_t bucket;		/* the counter's own: a stack, a bucket */
	uint32_t tid, gc_no;
};

struct counted_blocks {
	struct u32_table by_id;		/* event id -> index in blocks */
	struct counted_block *blocks;
	size_t nr_blocks, cap_blocks;
	uint32_t *free_slots;
	size_t nr_free, cap_free;
};

void counted_blocks_init(struct counted_blocks *cb);
void counted_blocks_free(struct counted_blocks *cb);
/* Room for n blocks at once, where the caller knows how many can be
 * counted at a time: a table of millions doubled step by step rehashed
 * every id at each step into memory the kernel zeroes. */
void counted_blocks_reserve(struct counted_blocks *cb, size_t n);
void counted_blocks_add(struct counted_blocks *cb, uint32_t id, const struct counted_block *blk);
/* id's block into *out, and no longer counted: false when it is not. */
bool counted_blocks_take(struct counted_blocks *cb, uint32_t id, struct counted_block *out);

static inline bool counted_blocks_has(const struct counted_blocks *cb, uint32_t id)
{
	return u32_table_get(&cb->by_id, id, NULL);
}

/* fn on each block still counted, in no order. */
void counted_blocks_each(const struct counted_blocks *cb,
			 void (*fn)(void *ctx, const struct counted_block *blk), void *ctx);

#endif
