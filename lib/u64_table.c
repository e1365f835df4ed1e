// SPDX-License-Identifier: MIT
#include "u64_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE (2u << 20)

/*
 * Zeroed slots. Tables of millions of addresses are probed at random: with
 * 4 KiB pages nearly every probe is a TLB miss too, which in a VM costs
 * more than the cache miss. Big tables are mapped anonymous memory, with a
 * hint for transparent huge pages: the kernel zeroes each page when it is
 * first touched, so a new table costs nothing at once (a memset of 384 MiB
 * had stalled the daemon for ~0.3 s, and its ring buffer overflowed).
 */
static struct u64_slot *zeroed(size_t n)
{
	struct u64_slot *p = calloc(n, sizeof(*p));

	if (!p) {
		fprintf(stderr, "out of memory for a table of %zu entries (%zu bytes)\n", n,
			n * sizeof(*p));
		exit(1);
	}
	return p;
}

static bool mapped(size_t n)
{
	return n * sizeof(struct u64_slot) >= 4 * HUGE_PAGE;
}

static struct u64_slot *alloc_slots(size_t n)
{
	size_t bytes = n * sizeof(struct u64_slot);
	void *p;

	if (!mapped(n))
		return zeroed(n);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "out of memory for a table of %zu entries (%zu bytes)\n", n,
			bytes);
		exit(1);
	}
	madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

static void free_slots(struct u64_slot *p, size_t n)
{
	if (p && mapped(n))
		munmap(p, n * sizeof(*p));
	else
		free(p);
}

void u64_table_init(struct u64_table *t)
{
	*t = (struct u64_table){ .mask = 63 };
	t->slots = alloc_slots(t->mask + 1);
}

void u64_table_free(struct u64_table *t)
{
	free_slots(t->slots, t->mask + 1);
	free_slots(t->old, t->old_mask + 1);
	t->slots = t->old = NULL;
	t->mask = t->used = t->old_mask = t->old_next = 0;
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

static struct u64_slot *find_in(struct u64_slot *slots, size_t mask, uint64_t key)
{
	size_t i = hash_u64(key) & mask;

	while (slots[i].key) {
		if (slots[i].key == key)
			return &slots[i];
		i = (i + 1) & mask;
	}
	return NULL;
}

/* Move the next n old slots. A moved entry stays in the old array too, but
 * is found in the new one first; remove() settles before it deletes, so no
 * stale copy is ever looked up. */
static void drain(struct u64_table *t, size_t n)
{
	for (; t->old && n > 0 && t->old_next <= t->old_mask; n--, t->old_next++) {
		const struct u64_slot *o = &t->old[t->old_next];

		if (o->key && !find_in(t->slots, t->mask, o->key))
			insert_fresh(t, o);
	}
	if (t->old && t->old_next > t->old_mask) {
		free_slots(t->old, t->old_mask + 1);
		t->old = NULL;
		t->old_mask = t->old_next = 0;
	}
}

void u64_table_settle(struct u64_table *t)
{
	drain(t, SIZE_MAX);
}

/* Slots moved from the old array per put: 4 drain it within a quarter of
 * the puts that would fill the new one to the load that grows it again. */
#define DRAIN_PER_PUT 4

static void grow(struct u64_table *t)
{
	size_t cap = t->mask + 1;

	u64_table_settle(t);	/* (not reached: see DRAIN_PER_PUT) */
	t->old = t->slots;
	t->old_mask = t->mask;
	t->old_next = 0;
	t->mask = cap * 2 - 1;
	t->slots = alloc_slots(cap * 2);
}

void u64_table_reserve(struct u64_table *t, size_t n)
{
	size_t cap;

	if (!t->slots)
		u64_table_init(t);
	cap = t->mask + 1;

	while (n * 2 > cap)
		cap *= 2;
	if (cap == t->mask + 1)
		return;
	u64_table_settle(t);
	if (!t->used) {		/* nothing to rehash: allocate at once */
		free_slots(t->slots, t->mask + 1);
		t->slots = alloc_slots(cap);
		t->mask = cap - 1;
		return;
	}
	while (t->mask + 1 < cap) {
		grow(t);
		u64_table_settle(t);
	}
}

/* One probe run: update the key where it is, or take the first empty slot. */
void u64_table_put(struct u64_table *t, uint64_t key, uint64_t a, uint32_t b)
{
	size_t i;

	if (!key)
		return;
	if (!t->slots)
		u64_table_init(t);
	drain(t, DRAIN_PER_PUT);
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
	if (t->old) {		/* not moved yet: it stays where it is */
		struct u64_slot *o = find_in(t->old, t->old_mask, key);

		if (o) {
			o->a = a;
			o->b = b;
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
	return t->old ? find_in(t->old, t->old_mask, key) : NULL;
}

/* Empty slots[hole] of an array (the old one when old), then backward
 * shift: pull later members of the probe run into the hole when the hole
 * lies between their home slot and where they sit. An old entry not yet
 * moved that would land in the moved part is moved now. */
static void empty_slot(struct u64_table *t, struct u64_slot *slots, size_t mask, size_t hole,
		       bool old)
{
	size_t i = hole;

	slots[hole].key = 0;
	for (;;) {
		size_t home;

		i = (i + 1) & mask;
		if (!slots[i].key)
			break;
		home = hash_u64(slots[i].key) & mask;
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			if (old && hole < t->old_next && i >= t->old_next &&
			    !find_in(t->slots, t->mask, slots[i].key))
				insert_fresh(t, &slots[i]);
			slots[hole] = slots[i];
			slots[i].key = 0;
			hole = i;
		}
	}
}

bool u64_table_remove(struct u64_table *t, uint64_t key)
{
	struct u64_slot *s, *o;

	if (!t->slots || !key)
		return false;
	s = find_in(t->slots, t->mask, key);
	if (s)
		empty_slot(t, t->slots, t->mask, (size_t)(s - t->slots), false);
	/* and its copy in the old array, moved or not, so it cannot reappear */
	o = t->old ? find_in(t->old, t->old_mask, key) : NULL;
	if (o)
		empty_slot(t, t->old, t->old_mask, (size_t)(o - t->old), true);
	if (!s && !o)
		return false;
	t->used--;
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
