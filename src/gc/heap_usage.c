// SPDX-License-Identifier: MIT
#include "gc/heap_usage.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gc/heap_walk.h"
#include "lib/util.h"

struct usage_walk {
	const struct gc_layout *l;
	struct heap_usage *u;
};

static int add_range(struct heap_usage *u, uint64_t start, uint64_t end)
{
	u->ranges = grow_array(u->ranges, &u->cap_ranges, u->nr_ranges + 1, sizeof(*u->ranges));
	u->ranges[u->nr_ranges++] = (struct heap_range){ start, end };
	return 0;
}

static int in_use_block(void *arg, uint64_t block, const uint8_t *hdr)
{
	const struct usage_walk *w = arg;
	const struct gc_layout *l = w->l;
	uint64_t hblk = 1ull << l->log_hblk, sz, bytes;
	const uint8_t *marks = hdr + l->hb_marks_off;

	memcpy(&sz, hdr + l->hb_sz_off, sizeof(sz));
	if (sz > hblk / 2) {	/* a large object: one mark byte, the first */
		bytes = (sz + hblk - 1) & ~(hblk - 1);
		if (marks[0])
			w->u->live += sz;
	} else {
		bytes = hblk;
		for (uint64_t off = 0; off + sz <= hblk; off += sz)
			if (marks[off >> l->granule_shift])
				w->u->live += sz;
	}
	w->u->in_use += bytes;
	return add_range(w->u, block, block + bytes);
}

static int free_chunk(void *arg, uint64_t block, uint64_t bytes, bool unmapped)
{
	const struct usage_walk *w = arg;

	if (unmapped) {
		w->u->unmapped += bytes;
		return 0;
	}
	w->u->free_mapped += bytes;
	return add_range(w->u, block, block + bytes);
}

int heap_range_cmp(const void *a, const void *b)
{
	const struct heap_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int heap_usage_read(pid_t pid, const struct gc_layout *l, uint64_t bias,
		    struct heap_usage *u, char *err, size_t errlen)
{
	struct usage_walk w = { l, u };
	struct heap_walk_stats st = { 0 };
	size_t n = 0;
	int ret;

	u->in_use = u->live = u->free_mapped = u->unmapped = 0;
	u->nr_ranges = 0;
	ret = heap_walk(pid, l, bias, in_use_block, free_chunk, &w, &st, err, errlen);
	u->blocks = st.blocks;
	u->unreadable = st.unreadable;
	qsort(u->ranges, u->nr_ranges, sizeof(*u->ranges), heap_range_cmp);
	for (size_t i = 0; i < u->nr_ranges; i++) {
		if (n && u->ranges[i].start <= u->ranges[n - 1].end) {
			if (u->ranges[i].end > u->ranges[n - 1].end)
				u->ranges[n - 1].end = u->ranges[i].end;
			continue;
		}
		u->ranges[n++] = u->ranges[i];
	}
	u->nr_ranges = n;
	u->walk_ns = st.walk_ns;
	return ret;
}

void heap_usage_free(struct heap_usage *u)
{
	free(u->ranges);
	memset(u, 0, sizeof(*u));
}
