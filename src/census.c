// SPDX-License-Identifier: MIT
/* --census: see census.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "census.h"

#define MAX_JUMP 4095		/* smaller hdr pointers are forwarding counts */
#define MAX_BOTTOM 65536	/* distinct bottom indices followed */
#define HB_BLOCK_OFF 16		/* hblkhdr.hb_block, checked against the index */

static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

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
static int walk_block(const struct walk *w, uint64_t block, const uint8_t *hdr)
{
	const struct gc_layout *l = w->l;
	struct census *c = w->c;
	pid_t pid = w->pid;
	uint64_t hblk = 1ull << l->log_hblk;
	uint64_t sz, hb_block;
	const uint8_t *marks = hdr + l->hb_marks_off;
	uint8_t data[8192];
	uint32_t id;

	memcpy(&sz, hdr + l->hb_sz_off, sizeof(sz));
	memcpy(&hb_block, hdr + HB_BLOCK_OFF, sizeof(hb_block));
	if (hdr[l->hb_flags_off] & l->free_blk)
		return 0;
	if (!sz || hb_block != block || hblk > sizeof(data)) {
		c->unreadable++;
		return 0;
	}
	c->blocks++;
	if (sz > hblk / 2) {	/* a large object: one mark byte, the first */
		if (!marks[0])
			return 0;
		if (peek(pid, block, &id, sizeof(id))) {
			c->unreadable++;
			return 0;
		}
		return count(w, id, sz, block);
	}
	if (peek(pid, block, data, hblk)) {
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
	uint64_t top_addr = bias + l->arrays_vaddr + l->top_index_off;
	size_t ntop = (size_t)l->top_mask + 1, nbottom = (size_t)l->bottom_mask + 1;
	size_t hdr_len = l->hb_marks_off + (1u << (l->log_hblk - l->granule_shift)) + 1;
	size_t bi_len = l->bi_link_off + 8;
	uint64_t *top = calloc(ntop, sizeof(*top));
	uint64_t *seen = calloc(MAX_BOTTOM, sizeof(*seen));
	uint8_t *bi = malloc(bi_len), *hdr = malloc(hdr_len);
	size_t nseen = 0;
	struct timespec t0, t1;
	int ret = -1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!top || !seen || !bi || !hdr) {
		snprintf(err, errlen, "census: out of memory");
		goto out;
	}
	if (peek(pid, top_addr, top, ntop * sizeof(*top))) {
		snprintf(err, errlen, "census: cannot read GC_arrays._top_index at 0x%llx of pid %d: %s",
			 (unsigned long long)top_addr, pid, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < ntop; i++) {
		/* A chain of bottom indices sharing this hash slot; every
		 * unused slot points at the one all-nil bottom index. */
		for (uint64_t b = top[i]; b; ) {
			size_t k;
			uint64_t key, link;

			for (k = 0; k < nseen && seen[k] != b; k++)
				;
			if (k < nseen || nseen == MAX_BOTTOM)
				break;
			seen[nseen++] = b;
			if (peek(pid, b, bi, bi_len)) {
				c->unreadable++;
				break;
			}
			memcpy(&key, bi + l->bi_key_off, sizeof(key));
			memcpy(&link, bi + l->bi_link_off, sizeof(link));
			for (size_t j = 0; j < nbottom; j++) {
				uint64_t h;

				memcpy(&h, bi + j * 8, sizeof(h));
				if (h <= MAX_JUMP)
					continue;
				if (peek(pid, h, hdr, hdr_len)) {
					c->unreadable++;
					continue;
				}
				if (walk_block(&w, (key << l->hi_shift) | (j << l->log_hblk), hdr)) {
					snprintf(err, errlen, "census: out of memory");
					goto out;
				}
			}
			b = link;
		}
	}
	ret = 0;
out:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->walk_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + t1.tv_nsec - t0.tv_nsec;
	free(top);
	free(seen);
	free(bi);
	free(hdr);
	return ret;
}

void census_free(struct census *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}
