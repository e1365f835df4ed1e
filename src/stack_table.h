/* SPDX-License-Identifier: MIT */
/*
 * The daemon's table of every stack the kernel sent: key (the kernel's
 * 64-bit hash) -> the trace's stack id. The kernel's cache of sent stacks
 * is bounded and forgets; this table does not, so each stack is written to
 * the trace once however often it is sent.
 */
#ifndef ALYS_STACK_TABLE_H
#define ALYS_STACK_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "u64_table.h"

struct stack_table {
	struct u64_table ids;	/* key -> check << 32 | id; check 0: frames not seen yet */
	uint32_t next_id;
	uint64_t distinct;	/* stacks written */
	uint64_t resent;	/* records of a stack already written */
	uint64_t collisions;	/* records whose key names other frames */
};

/* The id of the stack with this key, for an event; 0 for key 0. An event
 * may arrive before its stack's record (two CPUs): it gets the id now. */
uint32_t stack_table_event(struct stack_table *t, uint64_t key);
/* A stack record: sets *id; true when it is new and must be written. */
bool stack_table_record(struct stack_table *t, uint64_t key, const uint64_t *ips,
			uint32_t nr, uint32_t flags, uint32_t *id);
void stack_table_free(struct stack_table *t);

#endif
