// SPDX-License-Identifier: MIT
/*
 * The daemon's stack-node tree (src/unwind/stack_table.c), against the
 * stacks it was given: records of random stacks that share prefixes, sent
 * as the kernel sends them (the part below a known prefix, and that
 * prefix's key), through the index's growths. Every stack's frames come
 * back from its key; a resent record adds nothing; a record below a node
 * never sent is an orphan.
 */
#include <stdio.h>
#include <stdlib.h>

#include "alys_stack_key.h"
#include "unwind/stack_table.h"
#include "unit_check.h"

#define STACKS 200000
#define DEPTH 40
static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Stack s, outermost first: a path in a tree of 8 callers a level, so that
 * stacks share prefixes as a recursion's do; depth 10..DEPTH. */
static uint32_t stack_of(uint32_t s, uint64_t *out)
{
	uint32_t depth = 10 + s % (DEPTH - 9);
	uint64_t x = s * 0x9e3779b97f4a7c15ULL;

	for (uint32_t d = 0; d < depth; d++) {
		out[d] = 0x400000 + d * 0x100 + (x & 7) * 8;
		x = x >> 3 | x << 61;
	}
	return depth;
}

/* The keys of stack's prefixes: keys[k] for its k outermost frames. */
static void keys_of(const uint64_t *outer, uint32_t n, uint64_t *keys)
{
	keys[0] = alys_stack_root_key(0);
	for (uint32_t k = 1; k <= n; k++)
		keys[k] = alys_stack_child_key(keys[k - 1], outer[k - 1]);
}

int main(void)
{
	static struct stack_table t;
	uint64_t outer[DEPTH], inner[DEPTH], keys[DEPTH + 1], got[DEPTH + 1];
	uint32_t wrong = 0, unplaced = 0, extra = 0;

	for (uint32_t s = 0; s < STACKS; s++) {
		uint32_t n = stack_of(s, outer), known = 0;
		struct stack_new_nodes add;

		keys_of(outer, n, keys);
		/* the deepest prefix already in the table, as the kernel's
		 * cache would say (sometimes less: it forgets) */
		while (known < n && stack_table_event(&t, keys[known + 1]))
			known++;
		if (next() % 4 == 0)
			known = known ? (uint32_t)(next() % known) : 0;
		for (uint32_t i = 0; i < n - known; i++)
			inner[i] = outer[n - 1 - i];
		if (!stack_table_record(&t, 0, keys[known], keys[n], inner, n - known, &add))
			if (known < n && !stack_table_event(&t, keys[n]))
				unplaced++;
	}
	check("every record placed", unplaced == 0);
	check("no collision", t.collisions == 0);
	check("no orphan", t.orphans == 0);
	for (uint32_t s = 0; s < STACKS; s++) {
		uint32_t n = stack_of(s, outer), m;

		keys_of(outer, n, keys);
		m = stack_table_frames(&t, stack_table_event(&t, keys[n]), got, DEPTH + 1);
		if (m != n) {
			wrong++;
			continue;
		}
		for (uint32_t i = 0; i < n; i++)
			if (got[i] != outer[n - 1 - i]) {
				wrong++;
				break;
			}
	}
	check("every stack's frames back from its key", wrong == 0);
	for (uint32_t s = 0; s < 1000; s++) {
		uint32_t n = stack_of(s, outer);
		struct stack_new_nodes add;

		keys_of(outer, n, keys);
		for (uint32_t i = 0; i < n; i++)
			inner[i] = outer[n - 1 - i];
		extra += stack_table_record(&t, 0, keys[0], keys[n], inner, n, &add);
	}
	check("a stack sent whole again adds no node", extra == 0 && t.resent >= 1000);
	{
		struct stack_new_nodes add;
		uint64_t ip = 0x123;
		uint64_t parent = alys_stack_child_key(alys_stack_root_key(0), 0x999999);

		check("a record below a node never sent: refused, an orphan",
		      !stack_table_record(&t, 0, parent, alys_stack_child_key(parent, ip), &ip, 1,
					  &add) && t.orphans == 1);
	}
	check("an unknown key names no node", stack_table_event(&t, 12345) == 0 && t.unknown >= 1);
	printf("%u nodes for %u stacks\n", t.next_id, STACKS);
	check("nodes: fewer than the frames (prefixes shared)", t.next_id < STACKS * 25u);
	stack_table_free(&t);
	return unit_summary();
}
