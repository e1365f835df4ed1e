/* SPDX-License-Identifier: MIT */
/*
 * Every in-use block of the collector's heap in a stopped target, found
 * from outside (process_vm_readv) as the collector finds them: through
 * GC_arrays._top_index, the chains of bottom indices it hashes to, and the
 * block headers they point at. The census counts marked objects in them;
 * the heap snapshot copies them.
 */
#ifndef ALYS_HEAP_WALK_H
#define ALYS_HEAP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gc/gc_layout.h"

#define HB_BLOCK_OFF 16		/* hblkhdr.hb_block, checked against the index */

struct heap_walk_stats {
	uint64_t blocks;	/* in-use blocks handed to the callback */
	uint64_t unreadable;	/* headers that could not be read */
	uint64_t walk_ns;	/* the walk's time */
};

/* A free chunk of the heap: its first block and its bytes; unmapped: the
 * collector gave its pages back to the system (WAS_UNMAPPED). */
typedef int (*heap_free_fn)(void *arg, uint64_t block, uint64_t bytes, bool unmapped);

/* A read of len bytes at addr in pid: 0, or -1 (errno set). */
int heap_peek(pid_t pid, uint64_t addr, void *buf, size_t len);

/*
 * Calls block_fn(arg, block, hdr) for each in-use block (not free, hb_sz
 * set, hb_block matching the index), hdr holding its header up to and
 * including the mark bytes. bias is the load bias of the object holding
 * libgc. free_fn, if set, is called for each free chunk. Each returns 0,
 * or -1 to stop the walk (out of memory). 0 on success; -1 with the
 * reason in err.
 */
int heap_walk(pid_t pid, const struct gc_layout *l, uint64_t bias,
	      int (*block_fn)(void *arg, uint64_t block, const uint8_t *hdr),
	      heap_free_fn free_fn, void *arg, struct heap_walk_stats *st,
	      char *err, size_t errlen);

#endif
