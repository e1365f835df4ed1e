// SPDX-License-Identifier: MIT
#include "converter/heap.h"

#include <stdlib.h>
#include <string.h>

#include "profile/progress.h"
#include "lib/util.h"

static int by_addr(const void *a, const void *b)
{
	const struct heap_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

uint64_t heap_obj_addr(const struct heap *h, uint32_t obj)
{
	const struct heap_block *hb = &h->blocks[h->obj_block[obj]];

	return hb->addr + (uint64_t)(obj - hb->first_obj) * hb->b->obj_size;
}

uint64_t heap_obj_size(const struct heap *h, uint32_t obj)
{
	return h->blocks[h->obj_block[obj]].b->obj_size;
}

bool heap_obj_atomic(const struct heap *h, uint32_t obj)
{
	return h->blocks[h->obj_block[obj]].b->kind == ALYS_BLOCK_ATOMIC;
}

bool heap_obj_first_word(const struct heap *h, uint32_t obj, uint32_t *word)
{
	const struct heap_block *hb = &h->blocks[h->obj_block[obj]];
	uint64_t off = (uint64_t)(obj - hb->first_obj) * hb->b->obj_size;

	if (off + 4 > hb->b->len)
		return false;
	memcpy(word, hb->b->bytes + off, 4);
	return true;
}

/* The object p points into, or HEAP_NONE. */
static uint32_t object_at(const struct heap *h, uint64_t p, bool interior)
{
	size_t lo = 0, hi = h->nr_blocks;
	const struct heap_block *hb;
	uint64_t off;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->blocks[mid].addr <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return HEAP_NONE;
	hb = &h->blocks[lo - 1];
	if (p >= hb->end)
		return HEAP_NONE;
	off = p - hb->addr;
	if (!interior && off % hb->b->obj_size)
		return HEAP_NONE;
	return hb->first_obj + (uint32_t)(off / hb->b->obj_size);
}

/* Edges as found, then in both directions (compressed rows). */
struct edges {
	uint32_t (*v)[2];		/* from, to */
	size_t n, cap;
};

struct csr {
	uint32_t *start;		/* nr_nodes + 1 */
	uint32_t *to;
};

static void add_edge(struct edges *e, uint32_t from, uint32_t to)
{
	e->v = grow_array(e->v, &e->cap, e->n + 1, sizeof(*e->v));
	e->v[e->n][0] = from;
	e->v[e->n][1] = to;
	e->n++;
}

static void build_csr(struct csr *c, const struct edges *e, uint32_t nr_nodes, int dir)
{
	uint32_t *fill = xcalloc((size_t)nr_nodes + 1, sizeof(*fill));

	c->start = xcalloc((size_t)nr_nodes + 1, sizeof(*c->start));
	c->to = xcalloc(e->n ? e->n : 1, sizeof(*c->to));
	for (size_t i = 0; i < e->n; i++)
		c->start[e->v[i][dir] + 1]++;
	for (uint32_t i = 0; i < nr_nodes; i++)
		c->start[i + 1] += c->start[i];
	for (size_t i = 0; i < e->n; i++) {
		uint32_t from = e->v[i][dir];

		c->to[c->start[from] + fill[from]++] = e->v[i][!dir];
	}
	free(fill);
}

static void free_csr(struct csr *c)
{
	free(c->start);
	free(c->to);
}

/* The words of node n (a root's bytes, or a pointer-holding object's). */
static void words_of(const struct heap *h, uint32_t n, const uint8_t **p, size_t *len)
{
	const struct heap_block *hb;
	uint64_t off;
	uint32_t obj;

	*p = NULL;
	*len = 0;
	if (n == 0)
		return;
	if (n <= h->nr_roots) {
		*p = h->roots[n - 1].bytes;
		*len = h->roots[n - 1].len;
		return;
	}
	obj = heap_obj(h, n);
	hb = &h->blocks[h->obj_block[obj]];
	if (hb->b->kind == ALYS_BLOCK_ATOMIC)
		return;
	off = (uint64_t)(obj - hb->first_obj) * hb->b->obj_size;
	if (off >= hb->b->len)
		return;
	*p = hb->b->bytes + off;
	*len = hb->b->len - off < hb->b->obj_size ? hb->b->len - off : hb->b->obj_size;
}

/* Breadth first from the virtual root: reachability, shortest paths, and
 * every edge between reached nodes. */
static void mark(struct heap *h, struct edges *e)
{
	uint32_t *queue = xcalloc(h->nr_nodes, sizeof(*queue));
	bool interior = h->t->snapshot.all_interior_pointers;
	size_t head = 0, tail = 0;
	struct progress bar;

	h->parent[0] = 0;
	queue[tail++] = 0;
	progress_begin(&bar, "marking", h->nr_nodes);
	while (head < tail) {
		uint32_t n = queue[head++];
		const uint8_t *p;
		size_t len;

		progress_tick(&bar, head);
		if (n == 0) {
			for (uint32_t r = 1; r <= h->nr_roots; r++) {
				h->parent[r] = 0;
				h->parent_off[r] = 0;
				queue[tail++] = r;
				add_edge(e, 0, r);
			}
			continue;
		}
		words_of(h, n, &p, &len);
		for (size_t off = 0; off + 8 <= len; off += 8) {
			uint64_t w;
			uint32_t o;

			memcpy(&w, p + off, 8);
			o = object_at(h, w, interior);
			if (o == HEAP_NONE)
				continue;
			o += h->nr_roots + 1;
			add_edge(e, n, o);
			if (heap_is_object(h, n) && h->holder[o] == HEAP_NONE)
				h->holder[o] = n;
			if (h->parent[o] != HEAP_NONE)
				continue;
			h->parent[o] = n;
			h->parent_off[o] = (uint32_t)off;
			queue[tail++] = o;
		}
	}
	progress_end(&bar);
	free(queue);
}

/* Reverse postorder of the reached nodes, by an iterative depth-first walk. */
static void order(struct heap *h, const struct csr *succ)
{
	uint32_t *stack = xcalloc(h->nr_nodes, sizeof(*stack));
	uint32_t *next = xcalloc(h->nr_nodes, sizeof(*next));
	uint8_t *seen = xcalloc(h->nr_nodes, 1);
	uint32_t *post = xcalloc(h->nr_nodes, sizeof(*post));
	size_t sp = 0, np = 0;

	stack[sp++] = 0;
	seen[0] = 1;
	while (sp) {
		uint32_t n = stack[sp - 1];

		if (next[n] < succ->start[n + 1] - succ->start[n]) {
			uint32_t m = succ->to[succ->start[n] + next[n]++];

			if (!seen[m]) {
				seen[m] = 1;
				stack[sp++] = m;
			}
			continue;
		}
		post[np++] = n;
		sp--;
	}
	h->rpo = xcalloc(np ? np : 1, sizeof(*h->rpo));
	for (size_t i = 0; i < np; i++)
		h->rpo[i] = post[np - 1 - i];
	h->nr_reached = (uint32_t)np;
	free(stack);
	free(next);
	free(seen);
	free(post);
}

static uint32_t intersect(const uint32_t *idom, const uint32_t *rank, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (rank[a] > rank[b])
			a = idom[a];
		while (rank[b] > rank[a])
			b = idom[b];
	}
	return a;
}

/* Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm" (2001). */
static void dominators(struct heap *h, const struct csr *pred)
{
	uint32_t *rank = xcalloc(h->nr_nodes, sizeof(*rank));
	bool changed = true;

	for (uint32_t i = 0; i < h->nr_nodes; i++)
		h->idom[i] = HEAP_NONE;
	for (uint32_t i = 0; i < h->nr_reached; i++)
		rank[h->rpo[i]] = i;
	h->idom[0] = 0;
	while (changed) {
		changed = false;
		for (uint32_t i = 1; i < h->nr_reached; i++) {
			uint32_t v = h->rpo[i], nd = HEAP_NONE;

			for (uint32_t k = pred->start[v]; k < pred->start[v + 1]; k++) {
				uint32_t p = pred->to[k];

				if (h->idom[p] == HEAP_NONE)
					continue;
				nd = nd == HEAP_NONE ? p : intersect(h->idom, rank, p, nd);
			}
			if (h->idom[v] != nd) {
				h->idom[v] = nd;
				changed = true;
			}
		}
	}
	free(rank);
}

int heap_build(struct heap *h, const struct trace *t)
{
	const struct trace_snapshot *s = &t->snapshot;
	struct edges e = { 0 };
	struct csr succ, pred;
	uint64_t objs = 0;

	memset(h, 0, sizeof(*h));
	h->t = t;
	if (!t->has_snapshot) {
		errx_msg("%s holds no heap snapshot: take one with alys-bpf --heap-snapshot "
			 "--pid PID", t->path);
		return -1;
	}
	h->blocks = xcalloc(s->nr_blocks ? s->nr_blocks : 1, sizeof(*h->blocks));
	for (size_t i = s->first_block; i < s->first_block + s->nr_blocks; i++) {
		const struct trace_heap_block *b = &t->heap_blocks[i];
		struct heap_block *hb = &h->blocks[h->nr_blocks];
		uint64_t n = b->obj_size > s->block_size / 2 ? 1 : s->block_size / b->obj_size;

		if (objs + n >= UINT32_MAX / 2 || b->addr + n * b->obj_size < b->addr)
			continue;	/* hostile or absurd: left out */
		hb->addr = b->addr;
		hb->end = b->addr + n * b->obj_size;
		hb->nr_obj = (uint32_t)n;
		hb->b = b;
		objs += n;
		h->nr_blocks++;
	}
	qsort(h->blocks, h->nr_blocks, sizeof(*h->blocks), by_addr);
	/* overlapping blocks (a hostile file): the later ones are dropped */
	if (h->nr_blocks > 1) {
		size_t k = 1;

		for (size_t i = 1; i < h->nr_blocks; i++)
			if (h->blocks[i].addr >= h->blocks[k - 1].end)
				h->blocks[k++] = h->blocks[i];
		h->nr_blocks = k;
	}
	h->obj_block = xcalloc(objs ? objs : 1, sizeof(*h->obj_block));
	for (size_t i = 0; i < h->nr_blocks; i++) {
		h->blocks[i].first_obj = h->nr_objs;
		for (uint32_t k = 0; k < h->blocks[i].nr_obj; k++)
			h->obj_block[h->nr_objs + k] = (uint32_t)i;
		h->nr_objs += h->blocks[i].nr_obj;
		h->heap_objs += h->blocks[i].nr_obj;
		h->heap_bytes += (uint64_t)h->blocks[i].nr_obj * h->blocks[i].b->obj_size;
	}
	h->roots = s->nr_roots ? t->roots + s->first_root : NULL;
	h->nr_roots = (uint32_t)s->nr_roots;
	h->nr_nodes = h->nr_roots + 1 + h->nr_objs;
	h->parent = xcalloc(h->nr_nodes, sizeof(*h->parent));
	h->parent_off = xcalloc(h->nr_nodes, sizeof(*h->parent_off));
	h->holder = xcalloc(h->nr_nodes, sizeof(*h->holder));
	memset(h->holder, 0xff, (size_t)h->nr_nodes * sizeof(*h->holder));
	h->idom = xcalloc(h->nr_nodes, sizeof(*h->idom));
	h->retained = xcalloc(h->nr_nodes, sizeof(*h->retained));
	memset(h->parent, 0xff, (size_t)h->nr_nodes * sizeof(*h->parent));
	mark(h, &e);
	build_csr(&succ, &e, h->nr_nodes, 0);
	build_csr(&pred, &e, h->nr_nodes, 1);
	free(e.v);
	order(h, &succ);
	dominators(h, &pred);
	free_csr(&succ);
	free_csr(&pred);
	/* retained sizes: each node's own, added to its dominator's, leaves first */
	for (uint32_t i = h->nr_reached; i-- > 0;) {
		uint32_t v = h->rpo[i];

		if (heap_is_object(h, v)) {
			h->retained[v] += heap_obj_size(h, heap_obj(h, v));
			h->reached_objs++;
			h->reached_bytes += heap_obj_size(h, heap_obj(h, v));
		}
		if (v)
			h->retained[h->idom[v]] += h->retained[v];
	}
	return 0;
}

void heap_free(struct heap *h)
{
	free(h->blocks);
	free(h->obj_block);
	free(h->parent);
	free(h->parent_off);
	free(h->holder);
	free(h->idom);
	free(h->retained);
	free(h->rpo);
	memset(h, 0, sizeof(*h));
}
