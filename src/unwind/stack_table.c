// SPDX-License-Identifier: MIT
#include "unwind/stack_table.h"

#include <err.h>
#include <stdlib.h>

#include "alys_stack_key.h"
#include "lib/u64_table.h"	/* hash_u64 */

/* The id of the node with key, 0 if none. */
static uint32_t find_id(const struct stack_table *t, uint64_t key)
{
	if (!t->slots)
		return 0;
	for (size_t i = hash_u64(key) & t->mask; t->slots[i]; i = (i + 1) & t->mask)
		if (t->keys[t->slots[i] - 1] == key)
			return t->slots[i];
	return 0;
}

static void place_id(uint32_t *slots, size_t mask, uint64_t key, uint32_t id)
{
	size_t i = hash_u64(key) & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = id;
}

/* At most half full, so that probes stay short. calloc: a big array is
 * fresh mapped memory, zeroed by the kernel as it is touched. */
static void make_room(struct stack_table *t, uint32_t ids)
{
	size_t n = t->slots ? t->mask + 1 : 0, cap = n ? n : 1 << 17;
	uint32_t *slots;

	while ((size_t)ids * 2 > cap)
		cap *= 2;
	if (cap == n)
		return;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		errx(1, "out of memory for the index of %u stack nodes", ids);
	for (uint32_t id = 1; id < ids; id++)
		place_id(slots, cap - 1, t->keys[id - 1], id);
	free(t->slots);
	t->slots = slots;
	t->mask = cap - 1;
}

static uint32_t add_node(struct stack_table *t, uint64_t key, uint32_t parent, uint64_t ip)
{
	uint32_t id;

	if (t->next_id == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 1 << 16;

		t->keys = realloc(t->keys, (size_t)cap * sizeof(*t->keys));
		t->ips = realloc(t->ips, (size_t)cap * sizeof(*t->ips));
		t->parents = realloc(t->parents, (size_t)cap * sizeof(*t->parents));
		if (!t->keys || !t->ips || !t->parents)
			errx(1, "out of memory for %u stack nodes", cap);
		t->cap = cap;
	}
	id = ++t->next_id;
	t->keys[id - 1] = key;
	t->ips[id - 1] = ip;
	t->parents[id - 1] = parent;
	make_room(t, id);
	place_id(t->slots, t->mask, key, id);
	t->nodes++;
	return id;
}

uint32_t stack_table_event(struct stack_table *t, uint64_t key)
{
	uint32_t id;

	if (!key)
		return 0;
	id = find_id(t, key);
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
		id = find_id(t, parent);
		if (!id) {
			t->orphans++;
			return false;
		}
	}
	/* Outermost first: the known part, then the new part. */
	for (; i > 0; i--) {
		uint32_t child;

		k = alys_stack_child_key(k, ips[i - 1]);
		child = find_id(t, k);
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
	free(t->slots);
	free(t->keys);
	free(t->ips);
	free(t->parents);
}
