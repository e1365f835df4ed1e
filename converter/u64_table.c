// SPDX-License-Identifier: MIT
#include "u64_table.h"

#include <stdlib.h>

#include "util.h"

void u64_table_init(struct u64_table *t)
{
	t->mask = 63;
	t->used = 0;
	t->slots = xcalloc(t->mask + 1, sizeof(*t->slots));
}

void u64_table_free(struct u64_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = t->used = 0;
}

static size_t home_of(const struct u64_table *t, uint64_t key)
{
	return hash_u64(key) & t->mask;
}

static void insert_fresh(struct u64_table *t, const struct u64_slot *s)
{
	size_t i = home_of(t, s->key);

	while (t->slots[i].key)
		i = (i + 1) & t->mask;
	t->slots[i] = *s;
}

static void grow(struct u64_table *t)
{
	struct u64_slot *old = t->slots;
	size_t old_cap = t->mask + 1;

	t->mask = old_cap * 2 - 1;
	t->slots = xcalloc(old_cap * 2, sizeof(*t->slots));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			insert_fresh(t, &old[i]);
	free(old);
}

void u64_table_put(struct u64_table *t, uint64_t key, uint64_t a, uint32_t b)
{
	struct u64_slot *s = u64_table_get(t, key);
	struct u64_slot fresh = { .key = key, .a = a, .b = b };

	if (s) {
		s->a = a;
		s->b = b;
		return;
	}
	/* Keep the load at most 1/2: probes stay short for linear probing. */
	if ((t->used + 1) * 2 > t->mask + 1)
		grow(t);
	insert_fresh(t, &fresh);
	t->used++;
}

struct u64_slot *u64_table_get(const struct u64_table *t, uint64_t key)
{
	size_t i = home_of(t, key);

	while (t->slots[i].key) {
		if (t->slots[i].key == key)
			return &t->slots[i];
		i = (i + 1) & t->mask;
	}
	return NULL;
}

bool u64_table_remove(struct u64_table *t, uint64_t key)
{
	struct u64_slot *s = u64_table_get(t, key);
	size_t hole, i;

	if (!s)
		return false;
	hole = (size_t)(s - t->slots);
	t->slots[hole].key = 0;
	t->used--;
	/* Backward shift: pull later members of the probe run into the hole
	 * when the hole lies between their home slot and where they sit. */
	i = hole;
	for (;;) {
		size_t home;

		i = (i + 1) & t->mask;
		if (!t->slots[i].key)
			break;
		home = home_of(t, t->slots[i].key);
		if (((i - home) & t->mask) >= ((i - hole) & t->mask)) {
			t->slots[hole] = t->slots[i];
			t->slots[i].key = 0;
			hole = i;
		}
	}
	return true;
}
