// SPDX-License-Identifier: MIT
/* --census: see census.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "gc/census.h"
#include "gc/heap_walk.h"

static struct census_type *slot(struct census *c, uint32_t id)
{
	if (2 * (c->n + 1) > c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct census_type *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->v[i].objects)
				continue;
			size_t j = (c->v[i].type_id * 2654435761u) & (cap - 1);

			while (v[j].objects)
				j = (j + 1) & (cap - 1);
			v[j] = c->v[i];
		}
		free(c->v);
		c->v = v;
		c->cap = cap;
	}
	size_t j = (id * 2654435761u) & (c->cap - 1);

	while (c->v[j].objects && c->v[j].type_id != id)
		j = (j + 1) & (c->cap - 1);
	if (!c->v[j].objects) {
		c->v[j].type_id = id;
		c->n++;
	}
	return &c->v[j];
}

struct walk {
	pid_t pid;
	const struct gc_layout *l;
	struct census *c;
	int (*recorded)(void *arg, uint64_t addr);
	void *arg;
};

static int count(const struct walk *w, uint32_t id, uint64_t sz, uint64_t addr)
{
	struct census_type *e = slot(w->c, id);

	if (!e)
		return -1;
	if (!e->objects || (!e->example_recorded && w->recorded && w->recorded(w->arg, addr))) {
		e->example = addr;
		e->example_recorded = w->recorded && w->recorded(w->arg, addr);
	}
	e->objects++;
	e->bytes += sz;
	return 0;
}

/* One in-use block: every object whose mark byte is set. */
static int walk_block(void *arg, uint64_t block, const uint8_t *hdr)
{
	const struct walk *w = arg;
	const struct gc_layout *l = w->l;
	struct census *c = w->c;
	uint64_t hblk = 1ull << l->log_hblk;
	const uint8_t *marks = hdr + l->hb_marks_off;
	uint8_t data[8192];
	uint64_t sz;
	uint32_t id;

	memcpy(&sz, hdr + l->hb_sz_off, sizeof(sz));
	if (hblk > sizeof(data)) {
		c->unreadable++;
		return 0;
	}
	if (sz > hblk / 2) {	/* a large object: one mark byte, the first */
		if (!marks[0])
			return 0;
		if (heap_peek(w->pid, block, &id, sizeof(id))) {
			c->unreadable++;
			return 0;
		}
		return count(w, id, sz, block);
	}
	if (heap_peek(w->pid, block, data, hblk)) {
		c->unreadable++;
		return 0;
	}
	for (uint64_t off = 0; off + sz <= hblk; off += sz) {
		if (!marks[off >> l->granule_shift])
			continue;
		memcpy(&id, data + off, sizeof(id));
		if (count(w, id, sz, block + off))
			return -1;
	}
	return 0;
}

int census_walk(pid_t pid, const struct gc_layout *l, uint64_t bias, struct census *c,
		int (*recorded)(void *arg, uint64_t addr), void *arg,
		char *err, size_t errlen)
{
	struct walk w = { pid, l, c, recorded, arg };
	struct heap_walk_stats st = { 0 };
	int ret;

	ret = heap_walk(pid, l, bias, walk_block, NULL, &w, &st, err, errlen);
	c->blocks = st.blocks;
	c->unreadable += st.unreadable;
	c->walk_ns = st.walk_ns;
	return ret;
}

void census_free(struct census *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}
