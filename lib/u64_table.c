// SPDX-License-Identifier: MIT
#include "lib/u64_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#define HUGE_PAGE (2u << 20)

/*
 * Zeroed slots. Tables of millions of addresses are probed at random: with
 * 4 KiB pages nearly every probe is a TLB miss too, which in a VM costs
 * more than the cache miss. Big tables are mapped anonymous memory, with a
 * hint for transparent huge pages: the kernel zeroes each page when it is
 * first touched, so a new table costs nothing at once (a memset of 384 MiB
 * had stalled the daemon for ~0.3 s, and its ring buffer overflowed).
 */
static bool mapped(size_t bytes)
{
	return bytes >= 4 * HUGE_PAGE;
}

static void *alloc_zeroed(size_t n, size_t size)
{
	size_t bytes = n * size;
	void *p;

	if (!mapped(bytes)) {
		p = calloc(n, size);
	} else {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
		else
			madvise(p, bytes, MADV_HUGEPAGE);
	}
	if (!p) {
		fprintf(stderr, "out of memory for a table of %zu entries (%zu bytes)\n", n,
			bytes);
		exit(1);
	}
	return p;
}

static void free_zeroed(void *p, size_t n, size_t size)
{
	if (p && mapped(n * size))
		munmap(p, n * size);
	else
		free(p);
}

static struct u64_slot *alloc_slots(size_t n)
{
	return alloc_zeroed(n, sizeof(struct u64_slot));
}

static void free_slots(struct u64_slot *p, size_t n)
{
	free_zeroed(p, n, sizeof(*p));
}

/* Backward shift: whether the member at slot i, whose home slot is home,
 * moves into the hole before it (the hole lies between its home and i). */
static bool shifts_into(size_t i, size_t home, size_t hole, size_t mask)
{
	return ((i - home) & mask) >= ((i - hole) & mask);
}

/* Slots for an empty table; its kind of keys stays. */
static void init_slots(struct u64_table *t)
{
	t->mask = 63;
	t->used = 0;
	t->slots = alloc_slots(t->mask + 1);
}

void u64_table_init(struct u64_table *t)
{
	t->by_address = false;
	init_slots(t);
}

void u64_table_init_addresses(struct u64_table *t)
{
	t->by_address = true;
	init_slots(t);
}

void u64_table_free(struct u64_table *t)
{
	free_slots(t->slots, t->mask + 1);
	t->slots = NULL;
	t->mask = t->used = 0;
}

static size_t home_of(const struct u64_table *t, uint64_t key)
{
	if (t->by_address)
		return (hash_u64(key >> 8) << 4 | (key >> 4 & 15)) & t->mask;
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
	t->slots = alloc_slots(old_cap * 2);
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			insert_fresh(t, &old[i]);
	free_slots(old, old_cap);
}

/* The capacity, doubled from cap, that holds n entries at load 1/2. */
static size_t room_for(size_t cap, size_t n)
{
	while (n * 2 > cap)
		cap *= 2;
	return cap;
}

void u64_table_reserve(struct u64_table *t, size_t n)
{
	size_t cap;

	if (!t->slots)
		init_slots(t);
	cap = room_for(t->mask + 1, n);
	if (cap == t->mask + 1)
		return;
	if (!t->used) {		/* nothing to rehash: allocate at once */
		free_slots(t->slots, t->mask + 1);
		t->slots = alloc_slots(cap);
		t->mask = cap - 1;
		return;
	}
	while (t->mask + 1 < cap)
		grow(t);
}

/* One probe run: update the key where it is, or take the first empty slot. */
void u64_table_put(struct u64_table *t, uint64_t key, uint64_t a, uint32_t b)
{
	size_t i;

	if (!key)
		return;
	if (!t->slots)
		init_slots(t);
	/* Keep the load at most 1/2: probes stay short for linear probing. */
	if ((t->used + 1) * 2 > t->mask + 1)
		grow(t);
	for (i = home_of(t, key); t->slots[i].key; i = (i + 1) & t->mask) {
		if (t->slots[i].key == key) {
			t->slots[i].a = a;
			t->slots[i].b = b;
			return;
		}
	}
	t->slots[i] = (struct u64_slot){ .key = key, .a = a, .b = b };
	t->used++;
}

struct u64_slot *u64_table_get(const struct u64_table *t, uint64_t key)
{
	size_t i;

	if (!t->slots || !key)
		return NULL;
	i = home_of(t, key);
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
		if (shifts_into(i, home, hole, t->mask)) {
			t->slots[hole] = t->slots[i];
			t->slots[i].key = 0;
			hole = i;
		}
	}
	return true;
}

uint64_t u64_table_take_a(struct u64_table *t, uint64_t key)
{
	struct u64_slot *s = u64_table_get(t, key);
	uint64_t a;

	if (!s)
		return 0;
	a = s->a;
	u64_table_remove(t, key);
	return a;
}

/* u32_table: the same probing, a slot being key << 32 | value. */

void u32_table_init(struct u32_table *t)
{
	t->mask = 63;
	t->used = 0;
	t->slots = alloc_zeroed(t->mask + 1, sizeof(*t->slots));
}

void u32_table_free(struct u32_table *t)
{
	free_zeroed(t->slots, t->mask + 1, sizeof(*t->slots));
	t->slots = NULL;
	t->mask = t->used = 0;
}

/*
 * Keys are ids a reader counts out (1, 2, 3...): 8 consecutive ids share a
 * 64-byte line, so a table of millions is filled and probed a line at a
 * time, not a cache miss a key. Whole lines are spread by the hash: with
 * no hash, dense ids would make one probe run of the whole table.
 */
static size_t home_of32(const struct u32_table *t, uint32_t key)
{
	return (hash_u64(key >> 3) << 3 | (key & 7)) & t->mask;
}

static void grow32(struct u32_table *t)
{
	uint64_t *old = t->slots;
	size_t old_cap = t->mask + 1;

	t->mask = old_cap * 2 - 1;
	t->slots = alloc_zeroed(old_cap * 2, sizeof(*t->slots));
	for (size_t i = 0; i < old_cap; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = home_of32(t, (uint32_t)(old[i] >> 32)); t->slots[j]; j = (j + 1) & t->mask)
			;
		t->slots[j] = old[i];
	}
	free_zeroed(old, old_cap, sizeof(*old));
}

/* The slot index of key, or -1. */
static ssize_t find32(const struct u32_table *t, uint32_t key)
{
	if (!t->slots || !key)
		return -1;
	for (size_t i = home_of32(t, key); t->slots[i]; i = (i + 1) & t->mask)
		if ((uint32_t)(t->slots[i] >> 32) == key)
			return (ssize_t)i;
	return -1;
}

void u32_table_reserve(struct u32_table *t, size_t n)
{
	size_t cap;

	if (!t->slots)
		u32_table_init(t);
	cap = room_for(t->mask + 1, n);
	if (cap == t->mask + 1)
		return;
	if (!t->used) {		/* nothing to rehash: allocate at once */
		free_zeroed(t->slots, t->mask + 1, sizeof(*t->slots));
		t->slots = alloc_zeroed(cap, sizeof(*t->slots));
		t->mask = cap - 1;
		return;
	}
	while (t->mask + 1 < cap)
		grow32(t);
}

void u32_table_put(struct u32_table *t, uint32_t key, uint32_t val)
{
	size_t i;

	if (!key)
		return;
	if (!t->slots)
		u32_table_init(t);
	if ((t->used + 1) * 2 > t->mask + 1)
		grow32(t);
	for (i = home_of32(t, key); t->slots[i]; i = (i + 1) & t->mask)
		if ((uint32_t)(t->slots[i] >> 32) == key)
			break;
	if (!t->slots[i])
		t->used++;
	t->slots[i] = (uint64_t)key << 32 | val;
}

bool u32_table_get(const struct u32_table *t, uint32_t key, uint32_t *val)
{
	ssize_t i = find32(t, key);

	if (i < 0)
		return false;
	if (val)
		*val = (uint32_t)t->slots[i];
	return true;
}

bool u32_table_take(struct u32_table *t, uint32_t key, uint32_t *val)
{
	ssize_t at = find32(t, key);
	size_t hole, i;

	if (at < 0)
		return false;
	if (val)
		*val = (uint32_t)t->slots[at];
	hole = (size_t)at;
	t->slots[hole] = 0;
	t->used--;
	i = hole;
	for (;;) {
		size_t home;

		i = (i + 1) & t->mask;
		if (!t->slots[i])
			break;
		home = home_of32(t, (uint32_t)(t->slots[i] >> 32));
		if (shifts_into(i, home, hole, t->mask)) {
			t->slots[hole] = t->slots[i];
			t->slots[i] = 0;
			hole = i;
		}
	}
	return true;
}
