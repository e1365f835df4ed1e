/* SPDX-License-Identifier: MIT */
/*
 * The fibers of a stopped Crystal process, read from the runtime's own list
 * as its collector callback walks it: the class variable Fiber::fibers holds
 * a Thread::LinkedList(Fiber) (@mutex, @head, @tail), each Fiber linked by
 * its @next and @previous. Every version from 1.6 to 1.21 keeps every fiber
 * there (the main fiber of each thread too), whatever runs them.
 *
 * The field offsets are not named anywhere the tracer can read (Crystal's
 * DWARF has no members): they are the only ones at which the list is a
 * well-formed doubly linked list: @tail reached from @head through @next,
 * every node's @previous the node before, the ends null. Two fits that
 * disagree on the fibers are a refusal, never a guess.
 */
#ifndef ALYS_FIBER_LIST_H
#define ALYS_FIBER_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gc/fiber_layout.h"

struct fiber_entry {
	uint64_t fiber;		/* the Fiber object */
	uint64_t top, bottom;	/* its saved stack pointer, its stack's end */
	bool suspended;		/* @context.resumable: not running on a thread */
};

/* The fibers in pid's list, the class variable at list_var. 0 with *out
 * (to be freed) and *n; -1 with the cause in why. */
int fiber_list_read(pid_t pid, uint64_t list_var, const struct fiber_layout *fl,
		    struct fiber_entry **out, size_t *n, char *why, size_t whylen);

/* Where pid's list is: the layout derived from its executable
 * (/proc/PID/exe) and the list's address there. 0, or -1 with the cause
 * in why (not a Crystal program, or its Fiber::fibers not found). */
int fiber_list_find(pid_t pid, struct fiber_layout *fl, uint64_t *list_addr,
		    char *why, size_t whylen);

#endif
