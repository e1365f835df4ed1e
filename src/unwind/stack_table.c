// SPDX-License-Identifier: MIT
#include "stack_table.h"

#include <err.h>
#include <stdlib.h>

#include "alys_stack_key.h"

static uint32_t add_node(struct stack_table *t, uint64_t key, uint32_t parent, uint64_t ip)
{
	uint32_t id;

	if (t->next_id == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 1 << 16;

		t->ips = realloc(t->ips, (size_t)cap * sizeof(*t->ips));
		t->parents = realloc(t->parents, (size_t)cap * sizeof(*t->parents));
		if (!t->ips || !t->parents)
			errx(1, "out of memory for %u stack nodes", cap);
		t->cap = cap;
	}
	id = ++t->next_id;
	t->ips[id - 1] = ip;
	t->parents[id - 1] = parent;
	u64_table_put(&t->ids, key, id, 0);
	t->nodes++;
	return id;
}

uint32_t stack_table_event(struct stack_table *t, uint64_t key)
{
	uint32_t id;

	if (!key)
		return 0;
	id = (uint32_t)u64_table_get_a(&t->ids, key);
	if (!id)
		t->unknown++;
	return id;
}

bool stack_table_record(struct stack_table *t, uint32_t flags, uint64_t parent,
			uint64_t key, const uint64_t *ips, uint32_t nr,
			struct stack_new_nodes *add)
{
	uint64_t k = parent;
	uint32_t id = 0, i = nr;

	if (parent != alys_stack_root_key(flags)) {
		id = (uint32_t)u64_table_get_a(&t->ids, parent);
		if (!id) {
			t->orphans++;
			return false;
		}
	}
	/* Outermost first: the known part, then the new part. */
	for (; i > 0; i--) {
		uint32_t child;

		k = alys_stack_child_key(k, ips[i - 1]);
		child = (uint32_t)u64_table_get_a(&t->ids, k);
		if (!child)
			break;
		if (t->parents[child - 1] != id || t->ips[child - 1] != ips[i - 1]) {
			t->collisions++;
			return false;
		}
		id = child;
	}
	if (i == 0) {
		t->resent++;
		return false;
	}
	add->parent = id;
	add->n = i;
	add->ips = ips;
	for (; i > 0; i--) {
		if (i < add->n)
			k = alys_stack_child_key(k, ips[i - 1]);
		id = add_node(t, k, id, ips[i - 1]);
		if (i == add->n)
			add->first = id;
	}
	if (k != key)
		t->collisions++;	/* frames that do not hash to their key */
	t->distinct++;
	return true;
}

uint32_t stack_table_frames(const struct stack_table *t, uint32_t id,
			    uint64_t *ips, uint32_t max)
{
	uint32_t n = 0;

	while (id && id <= t->next_id && n < max) {
		ips[n++] = t->ips[id - 1];
		id = t->parents[id - 1];
	}
	return n;
}

void stack_table_free(struct stack_table *t)
{
	u64_table_free(&t->ids);
	free(t->ips);
	free(t->parents);
}
