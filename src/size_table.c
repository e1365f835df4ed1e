// SPDX-License-Identifier: MIT
#include "size_table.h"

#include <stdlib.h>

/* Deleted slots keep a tombstone so probe chains stay intact. */
#define TOMBSTONE UINT64_MAX

static size_t slot_of(uint64_t addr, size_t cap)
{
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdULL;
	addr ^= addr >> 33;
	return addr & (cap - 1);
}

static int grow(struct size_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1 << 16;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint64_t *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->keys[i] || t->keys[i] == TOMBSTONE)
			continue;
		for (j = slot_of(t->keys[i], cap); keys[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = t->keys[i];
		vals[j] = t->vals[i];
	}
	free(t->keys);
	free(t->vals);
	t->keys = keys;
	t->vals = vals;
	t->cap = cap;
	return 0;
}

static size_t find(const struct size_table *t, uint64_t addr)
{
	size_t j;

	for (j = slot_of(addr, t->cap); t->keys[j]; j = (j + 1) & (t->cap - 1))
		if (t->keys[j] == addr)
			return j;
	return SIZE_MAX;
}

void size_table_put(struct size_table *t, uint64_t addr, uint64_t size)
{
	size_t j, tomb = SIZE_MAX;

	if (!addr || addr == TOMBSTONE)
		return;
	/* used counts tombstones too: rehashing drops them. */
	if ((t->used + 1) * 4 > t->cap * 3 && grow(t))
		return;
	for (j = slot_of(addr, t->cap); t->keys[j]; j = (j + 1) & (t->cap - 1)) {
		if (t->keys[j] == addr) {
			t->vals[j] = size;
			return;
		}
		if (t->keys[j] == TOMBSTONE && tomb == SIZE_MAX)
			tomb = j;
	}
	if (tomb != SIZE_MAX)
		j = tomb;
	else
		t->used++;
	t->keys[j] = addr;
	t->vals[j] = size;
}

uint64_t size_table_get(const struct size_table *t, uint64_t addr)
{
	size_t j;

	if (!t->cap || !addr)
		return 0;
	j = find(t, addr);
	return j == SIZE_MAX ? 0 : t->vals[j];
}

uint64_t size_table_take(struct size_table *t, uint64_t addr)
{
	size_t j;

	if (!t->cap || !addr)
		return 0;
	j = find(t, addr);
	if (j == SIZE_MAX)
		return 0;
	t->keys[j] = TOMBSTONE;
	return t->vals[j];
}

void size_table_free(struct size_table *t)
{
	free(t->keys);
	free(t->vals);
	t->keys = t->vals = NULL;
	t->cap = t->used = 0;
}
