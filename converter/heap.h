/* SPDX-License-Identifier: MIT */
/*
 * The object graph of a heap snapshot (alys-bpf --heap-snapshot, FORMAT.md
 * records 9-11), as the collector sees it: every slot of a heap block is an
 * object; a word of a root or of a pointer-holding object that points into
 * an object (anywhere in it when the collector recognizes interior
 * pointers, else at its start) is an edge; pointer-free (atomic) objects
 * hold none. Reachability from the roots, shortest paths (breadth first)
 * and the dominator tree (the iterative algorithm of Cooper, Harvey and
 * Kennedy) give each object's retained size: the bytes that would be freed
 * with it.
 *
 * Nodes: 0 is a virtual root above every root; 1..nr_roots the roots
 * (roots[n - 1]); then the objects. A trace may hold several snapshots:
 * this is its last.
 */
#ifndef ALYS_CONV_HEAP_H
#define ALYS_CONV_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/trace.h"

#define HEAP_NONE UINT32_MAX

struct heap_block {
	uint64_t addr, end;		/* the objects' extent */
	uint32_t first_obj, nr_obj;
	const struct trace_heap_block *b;
};

struct heap {
	const struct trace *t;
	const struct trace_root *roots;	/* the last snapshot's (nr_roots) */
	struct heap_block *blocks;	/* sorted by address */
	size_t nr_blocks;
	uint32_t nr_objs, nr_roots, nr_nodes;
	uint32_t *obj_block;		/* per object: index into blocks */

	uint32_t *parent;		/* per node: BFS parent, HEAP_NONE if unreached */
	uint32_t *parent_off;		/* ... and the offset in it of the pointer */
	/* per node: the first object found pointing to it (breadth first),
	 * HEAP_NONE if only roots do: a stale word on a stack can be the
	 * shortest path to a buffer, never what it is the buffer of */
	uint32_t *holder;
	uint32_t *idom;			/* per node: immediate dominator */
	uint64_t *retained;		/* per node: bytes it keeps alive */
	uint32_t *rpo;			/* reachable nodes, reverse postorder */
	uint32_t nr_reached;		/* nodes in rpo */
	uint64_t reached_objs, reached_bytes, heap_objs, heap_bytes;
};

/* 0, or -1 with a message printed (no snapshot in the trace). */
int heap_build(struct heap *h, const struct trace *t);
void heap_free(struct heap *h);

static inline bool heap_is_object(const struct heap *h, uint32_t node)
{
	return node > h->nr_roots && node != HEAP_NONE;
}

static inline uint32_t heap_obj(const struct heap *h, uint32_t node)
{
	return node - h->nr_roots - 1;
}

uint64_t heap_obj_addr(const struct heap *h, uint32_t obj);
uint64_t heap_obj_size(const struct heap *h, uint32_t obj);
/* Its first 32-bit word (a Crystal type id for a reference object), and
 * whether the snapshot holds it. */
bool heap_obj_first_word(const struct heap *h, uint32_t obj, uint32_t *word);
bool heap_obj_atomic(const struct heap *h, uint32_t obj);

#endif /* ALYS_CONV_HEAP_H */
