/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash table from a non-zero 64-bit key to a (u64, u32)
 * value, the one of both programs. The converter: address -> live
 * allocation, address -> symbol cache slot; the
 * daemon: address -> size of every live block, stack key -> trace id. All
 * see millions of operations, so it is one flat array with linear probing
 * and backward-shift deletion (no tombstones to clean up). A zeroed table
 * is an empty one; running out of memory ends the program with a message.
 */
#ifndef ALYS_U64_TABLE_H
#define ALYS_U64_TABLE_H

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
	bool by_address;	/* u64_table_init_addresses */
};

void u64_table_init(struct u64_table *t);
/*
 * For keys that are heap addresses, which a program allocates in runs
 * (neighbours in a block of the collector, one after another): 16
 * consecutive granules of 16 bytes have 16 consecutive home slots, so a
 * run of allocations, or of deaths read in address order, fills and
 * probes the table a line at a time, not a cache miss a key. Groups of
 * 256 bytes are spread by the hash.
 */
void u64_table_init_addresses(struct u64_table *t);
void u64_table_free(struct u64_table *t);

/* Make room for n entries at once: growing step by step rehashes every
 * entry again at each doubling, a cache miss each in a big table. */
void u64_table_reserve(struct u64_table *t, size_t n);

/* Insert or overwrite. Key 0 is no key: ignored. */
void u64_table_put(struct u64_table *t, uint64_t key, uint64_t a, uint32_t b);

/* The slot for key, or NULL (also for key 0). Valid until the next put or
 * remove. */
struct u64_slot *u64_table_get(const struct u64_table *t, uint64_t key);

bool u64_table_remove(struct u64_table *t, uint64_t key);

/* key's a, 0 when key is absent. */
static inline uint64_t u64_table_get_a(const struct u64_table *t, uint64_t key)
{
	const struct u64_slot *s = u64_table_get(t, key);

	return s ? s->a : 0;
}

/* Removes key; its a, 0 when it was absent. */
uint64_t u64_table_take_a(struct u64_table *t, uint64_t key);

/*
 * A non-zero 32-bit key to a 32-bit value, probed as u64_table: 8 bytes a
 * slot where u64_table's are 24. For millions of small ids (the counted
 * blocks by event id of a compiler's trace: 64 MB of slots, not 192).
 */
struct u32_table {
	uint64_t *slots;	/* key << 32 | value; 0: empty */
	size_t mask;
	size_t used;
};

void u32_table_init(struct u32_table *t);
void u32_table_free(struct u32_table *t);
/* Make room for n entries at once (as u64_table_reserve). */
void u32_table_reserve(struct u32_table *t, size_t n);
/* Insert or overwrite. Key 0 is no key: ignored. */
void u32_table_put(struct u32_table *t, uint32_t key, uint32_t val);
/* Whether key is there; its value into *val (if not NULL). */
bool u32_table_get(const struct u32_table *t, uint32_t key, uint32_t *val);
/* The same, and key removed. */
bool u32_table_take(struct u32_table *t, uint32_t key, uint32_t *val);

/* The 64-bit mix the table hashes keys with (splitmix64's finalizer). */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif /* ALYS_U64_TABLE_H */
