/* SPDX-License-Identifier: MIT */
/*
 * The daemon's tree of every stack node the kernel sent (alys_stack_key.h):
 * node key -> the trace's node id, and each node's parent and frame. The
 * kernel's cache of sent nodes is bounded and forgets; this table does not,
 * so each node is written to the trace once however often it is sent.
 */
#ifndef ALYS_STACK_TABLE_H
#define ALYS_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stack_table {
	/* node key -> id: open addressing of ids, a key compared through
	 * keys[]. 4 bytes a slot where a u64_table's are 24: a compiler's
	 * trace has millions of nodes (7.4M: 67 MB of slots, not 384). */
	uint32_t *slots;	/* 0: empty */
	size_t mask;		/* slots - 1; 0 before the first node */
	uint64_t *keys;		/* by id - 1: the node's key */
	uint64_t *ips;		/* by id - 1: the node's innermost frame */
	uint32_t *parents;	/* by id - 1: its parent's id, 0 for a root's child */
	uint32_t cap;
	uint32_t next_id;
	uint64_t distinct;	/* stack records that brought new nodes */
	uint64_t nodes;		/* nodes written */
	uint64_t resent;	/* records whose nodes were all written already */
	uint64_t collisions;	/* a key naming another node than the record's */
	uint64_t orphans;	/* records hanging from a node never sent */
	uint64_t unknown;	/* events whose stack key names no node */
};

/* The nodes a record adds: frames ips[0..n) (innermost first) become nodes
 * first .. first + n - 1, each the parent of the one before it in ips[]; the
 * outermost hangs from node parent (0: the root). */
struct stack_new_nodes {
	uint32_t first, parent, n;
	const uint64_t *ips;
};

/* The node id of the stack with this key, for an event; 0 for key 0, or a
 * key no record defined (counted in unknown). */
uint32_t stack_table_event(struct stack_table *t, uint64_t key);
/* A stack record: frames ips[0..nr) (innermost first) below the node with
 * key parent (the root key of flags: none), the whole stack's key being
 * key. Sets *add to the nodes not seen before; false when there are none
 * or the record cannot be placed (collision, orphan: counted). */
bool stack_table_record(struct stack_table *t, uint32_t flags, uint64_t parent,
			uint64_t key, const uint64_t *ips, uint32_t nr,
			struct stack_new_nodes *add);
/* The frames of node id, innermost first, at most max of them; their
 * number. */
uint32_t stack_table_frames(const struct stack_table *t, uint32_t id,
			    uint64_t *ips, uint32_t max);
void stack_table_free(struct stack_table *t);

#endif
