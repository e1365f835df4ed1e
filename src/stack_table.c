// SPDX-License-Identifier: MIT
#include "stack_table.h"

/* An independent 32-bit hash of the frames (FNV-1a over their bytes): two
 * records with one key and different checks are two stacks. */
static uint32_t check_of(const uint64_t *ips, uint32_t nr, uint32_t flags)
{
	uint32_t h = 2166136261u ^ flags;

	for (uint32_t i = 0; i < nr; i++)
		for (int b = 0; b < 64; b += 8) {
			h ^= (uint8_t)(ips[i] >> b);
			h *= 16777619u;
		}
	h ^= nr;
	return h ? h : 1;
}

static uint32_t assign(struct stack_table *t, uint64_t key, uint32_t check)
{
	uint32_t id = ++t->next_id;

	u64_table_put(&t->ids, key, (uint64_t)check << 32 | id, 0);
	return id;
}

uint32_t stack_table_event(struct stack_table *t, uint64_t key)
{
	uint64_t v;

	if (!key)
		return 0;
	v = u64_table_get_a(&t->ids, key);
	return v ? (uint32_t)v : assign(t, key, 0);
}

bool stack_table_record(struct stack_table *t, uint64_t key, const uint64_t *ips,
			uint32_t nr, uint32_t flags, uint32_t *id)
{
	uint32_t check = check_of(ips, nr, flags);
	uint64_t v = u64_table_get_a(&t->ids, key);

	if (!v) {
		*id = assign(t, key, check);
	} else if (!(v >> 32)) {
		*id = (uint32_t)v;
		u64_table_put(&t->ids, key, (uint64_t)check << 32 | *id, 0);
	} else {
		*id = (uint32_t)v;
		if (v >> 32 == check)
			t->resent++;
		else
			t->collisions++;
		return false;
	}
	t->distinct++;
	return true;
}

void stack_table_free(struct stack_table *t)
{
	u64_table_free(&t->ids);
}
