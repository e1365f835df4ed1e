/* SPDX-License-Identifier: MIT */
/*
 * --census: live objects by Crystal type id, from a walk of the collector's
 * heap in a stopped target (process_vm_readv). Every in-use block is found
 * through GC_arrays._top_index and its bottom indices; an object counts when
 * its mark byte is set, and its type id is the 32-bit word Crystal writes at
 * offset 0 of every object it allocates.
 */
#ifndef ALYS_CENSUS_H
#define ALYS_CENSUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gc/gc_layout.h"

struct census_type {
	uint32_t type_id;
	uint64_t objects;
	uint64_t bytes;		/* block-rounded sizes (hb_sz) */
	uint64_t example;	/* the address of one such live object */
	int example_recorded;	/* ... whose allocation the trace holds */
};

struct census {
	struct census_type *v;	/* open-addressed by type_id; cap a power of 2 */
	size_t n, cap;
	uint64_t blocks;	/* in-use heap blocks walked */
	uint64_t unreadable;	/* headers or blocks that could not be read */
	uint64_t walk_ns;
};

/* Walks pid's heap; bias is the load bias of the object holding libgc.
 * recorded(arg, addr), if set, says whether the trace holds the allocation
 * event of the block at addr: such a block is preferred as a type's
 * example, so that the converter can name the type by its site.
 * 0 on success; -1 with the reason in err. */
int census_walk(pid_t pid, const struct gc_layout *l, uint64_t bias, struct census *c,
		int (*recorded)(void *arg, uint64_t addr), void *arg,
		char *err, size_t errlen);
void census_free(struct census *c);

#endif
