// SPDX-License-Identifier: MIT
/*
 * The hash tables both programs use (lib/u64_table.c), against a plain
 * array, through growths into mapped memory: random puts, overwrites, gets
 * and removes, checking every key after each phase; keys hashed, and keys
 * homed as heap addresses. The same for the
 * compact u32_table, with dense ids as keys (as the converter's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/u64_table.h"
#include "unit_check.h"

#define KEYS 300000

/* keys spread over 64 bits, never 0; clustered ones too (addresses) */
static uint64_t key_of(uint32_t i)
{
	return i & 1 ? (uint64_t)i * 0x9e3779b97f4a7c15ULL | 1 : 0x7f0000000000ULL + (uint64_t)i * 16;
}

static int all_match(const struct u64_table *t, const uint64_t *val, const char *in)
{
	size_t n = 0;

	for (uint32_t i = 0; i < KEYS; i++) {
		const struct u64_slot *s = u64_table_get(t, key_of(i));

		if (in[i] != (s != NULL) || (s && (s->a != val[i] || s->b != (uint32_t)i))) {
			fprintf(stderr, "key %u: %s\n", i, in[i] ? "wrong or missing" : "present");
			return 0;
		}
		n += in[i];
	}
	return n == t->used;
}

static int all_match32(const struct u32_table *t, const uint64_t *val, const char *in)
{
	size_t n = 0, held = 0;

	for (uint32_t i = 1; i < KEYS; i++) {
		uint32_t v = 0;
		bool got = u32_table_get(t, i, &v);

		if (in[i] != got || (got && v != (uint32_t)val[i])) {
			fprintf(stderr, "u32 key %u: %s\n", i, in[i] ? "wrong or missing" : "present");
			return 0;
		}
		n += in[i];
	}
	for (size_t i = 0; i <= t->mask; i++)
		held += t->slots[i] != 0;
	return n == t->used && held == n && !u32_table_get(t, 0, NULL);
}

/* Growths, overwrites, takes (backward shifts), and a key
 * 0 that is no key. */
static int u32_phases(uint64_t *val, char *in)
{
	struct u32_table t = { 0 };
	int ok = 1;

	memset(in, 0, KEYS);
	u32_table_reserve(&t, 100);	/* empty: slots made at once */
	u32_table_put(&t, 0, 7);
	for (uint32_t round = 0; round < 6 && ok; round++) {
		if (round == 3)		/* full of keys: rehashed into the room */
			u32_table_reserve(&t, KEYS);
		for (int op = 0; op < 400000; op++) {
			uint32_t i = 1 + (uint32_t)(unit_rand() % (KEYS - 1)), v;
			uint64_t r = unit_rand() % 10;

			if (r < 6) {
				val[i] = unit_rand();
				in[i] = 1;
				u32_table_put(&t, i, (uint32_t)val[i]);
			} else {
				bool had = u32_table_take(&t, i, &v);

				if (had != (bool)in[i] || (had && v != (uint32_t)val[i])) {
					fprintf(stderr, "take %u: %d, expected %d\n", i, had, in[i]);
					ok = 0;
				}
				in[i] = 0;
			}
		}
		ok = ok && all_match32(&t, val, in);
	}
	/* room made for 300k keys: 2^20 slots */
	if (ok && t.mask + 1 != 1u << 20) {
		fprintf(stderr, "u32 table of %zu slots\n", t.mask + 1);
		ok = 0;
	}
	for (uint32_t i = 1; i < KEYS && ok; i += 2) {
		u32_table_take(&t, i, NULL);
		in[i] = 0;
	}
	ok = ok && all_match32(&t, val, in);
	u32_table_free(&t);
	return ok;
}

/* Random puts, removes, in-place updates and gets against the array,
 * through growths into mapped memory. */
static void u64_phases(bool by_address, uint64_t *val, char *in, const char *kind)
{
	struct u64_table t = { 0 };
	size_t held = 0;
	char what[160];

	memset(in, 0, KEYS);
	if (by_address)
		u64_table_init_addresses(&t);
	/* growth: rehashed at each doubling */
	for (uint32_t round = 0; round < 6; round++) {
		for (int op = 0; op < 400000; op++) {
			uint32_t i = (uint32_t)(unit_rand() % KEYS);
			uint64_t r = unit_rand() % 10;

			if (r < 6) {
				val[i] = unit_rand();
				in[i] = 1;
				u64_table_put(&t, key_of(i), val[i], i);
			} else if (r < 9) {
				int had = u64_table_remove(&t, key_of(i));

				if (had != in[i]) {
					fprintf(stderr, "remove %u: %d, expected %d\n", i, had, in[i]);
					in[KEYS - 1] ^= 2;	/* make the check fail */
				}
				in[i] = 0;
			} else {
				struct u64_slot *s = u64_table_get(&t, key_of(i));

				if (s) {	/* in place, as callers do */
					s->a++;
					val[i]++;
				}
			}
		}
		snprintf(what, sizeof(what), "%s: random puts, removes, in-place updates, round %u: "
			 "every key as in the array", kind, round);
		check(what, all_match(&t, val, in));
	}
	/* lib/u64_table.c maps tables of 8 MiB and more */
	snprintf(what, sizeof(what), "%s: the table grew into mapped memory", kind);
	check(what, (t.mask + 1) * sizeof(struct u64_slot) >= 8u << 20);
	/* removes only, the table full of keys from several growths */
	for (uint32_t i = 0; i < KEYS; i += 3) {
		u64_table_remove(&t, key_of(i));
		in[i] = 0;
	}
	snprintf(what, sizeof(what), "%s: a third removed", kind);
	check(what, all_match(&t, val, in));
	for (size_t i = 0; i <= t.mask; i++)
		held += t.slots[i].key != 0;
	snprintf(what, sizeof(what), "%s: the array holds every entry", kind);
	check(what, held == t.used && all_match(&t, val, in));
	snprintf(what, sizeof(what), "%s: the kind of keys kept through growths", kind);
	check(what, t.by_address == by_address);
	u64_table_free(&t);
}

/* Addresses allocated in a run have neighbouring homes: 16 granules of a
 * 256-byte group, one after another. */
static int address_homes_neighbour(void)
{
	struct u64_table t;
	const struct u64_slot *first, *s;
	int ok = 1;

	u64_table_init_addresses(&t);
	u64_table_reserve(&t, 1u << 16);
	for (uint64_t g = 0; g < 16; g++)
		u64_table_put(&t, 0x7f1234567800ULL + g * 16, g, (uint32_t)g);
	first = u64_table_get(&t, 0x7f1234567800ULL);
	for (uint64_t g = 0; g < 16 && first; g++) {
		s = u64_table_get(&t, 0x7f1234567800ULL + g * 16);
		ok = ok && s && s->a == g && (size_t)(s - t.slots) == (((size_t)(first - t.slots) + g) & t.mask);
	}
	u64_table_free(&t);
	return first && ok;
}

int main(void)
{
	static uint64_t val[KEYS];
	static char in[KEYS];

	u64_phases(false, val, in, "hashed keys");
	u64_phases(true, val, in, "address keys");
	check("address keys: a 256-byte group's 16 granules in consecutive slots",
	      address_homes_neighbour());
	check("the u32 table: random puts, takes and gets as the array, room made empty and full",
	      u32_phases(val, in));
	return unit_summary();
}
