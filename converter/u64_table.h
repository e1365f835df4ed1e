/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash table from a non-zero 64-bit key to a (u64, u32)
 * value.  Used for address -> live allocation, stack id -> stack index and
 * address -> symbol cache slot; all three see millions of operations, so it
 * is one flat array with linear probing and backward-shift deletion
 * (no tombstones to clean up).
 */
#ifndef ALYS_CONV_U64_TABLE_H
#define ALYS_CONV_U64_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64_slot {
	uint64_t key;		/* 0: empty */
	uint64_t a;
	uint32_t b;
};

struct u64_table {
	struct u64_slot *slots;
	size_t mask;		/* capacity - 1; capacity is a power of two */
	size_t used;
};

void u64_table_init(struct u64_table *t);
void u64_table_free(struct u64_table *t);

/* Make room for n entries at once: growing step by step rehashes every
 * entry again at each doubling, a cache miss each in a big table. */
void u64_table_reserve(struct u64_table *t, size_t n);

/* Insert or overwrite. key must not be 0. */
void u64_table_put(struct u64_table *t, uint64_t key, uint64_t a, uint32_t b);

/* The slot for key, or NULL. Valid until the next put or remove. */
struct u64_slot *u64_table_get(const struct u64_table *t, uint64_t key);

bool u64_table_remove(struct u64_table *t, uint64_t key);

#endif /* ALYS_CONV_U64_TABLE_H */
