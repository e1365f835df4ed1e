// SPDX-License-Identifier: MIT
#include "profile/counted_blocks.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

void counted_blocks_init(struct counted_blocks *cb)
{
	memset(cb, 0, sizeof(*cb));
	u32_table_init(&cb->by_id);
}

void counted_blocks_free(struct counted_blocks *cb)
{
	free(cb->blocks);
	free(cb->free_slots);
	u32_table_free(&cb->by_id);
	memset(cb, 0, sizeof(*cb));
}

void counted_blocks_reserve(struct counted_blocks *cb, size_t n)
{
	u32_table_reserve(&cb->by_id, n);
	cb->blocks = grow_array(cb->blocks, &cb->cap_blocks, n, sizeof(*cb->blocks));
}

void counted_blocks_add(struct counted_blocks *cb, uint32_t id, const struct counted_block *blk)
{
	uint32_t at;

	if (cb->nr_free) {
		at = cb->free_slots[--cb->nr_free];
	} else {
		cb->blocks = grow_array(cb->blocks, &cb->cap_blocks, cb->nr_blocks + 1,
					sizeof(*cb->blocks));
		at = (uint32_t)cb->nr_blocks++;
	}
	cb->blocks[at] = *blk;
	u32_table_put(&cb->by_id, id, at);
}

bool counted_blocks_take(struct counted_blocks *cb, uint32_t id, struct counted_block *out)
{
	uint32_t at;

	if (!u32_table_take(&cb->by_id, id, &at))
		return false;
	*out = cb->blocks[at];
	cb->free_slots = grow_array(cb->free_slots, &cb->cap_free, cb->nr_free + 1,
				    sizeof(*cb->free_slots));
	cb->free_slots[cb->nr_free++] = at;
	return true;
}

void counted_blocks_each(const struct counted_blocks *cb,
			 void (*fn)(void *ctx, const struct counted_block *blk), void *ctx)
{
	for (size_t i = 0; cb->by_id.slots && i <= cb->by_id.mask; i++)
		if (cb->by_id.slots[i])
			fn(ctx, &cb->blocks[(uint32_t)cb->by_id.slots[i]]);
}
