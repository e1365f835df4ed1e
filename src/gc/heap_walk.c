// SPDX-License-Identifier: MIT
#include "gc/heap_walk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "base/clock_ns.h"

#define MAX_JUMP 4095		/* smaller hdr pointers are forwarding counts */
#define MAX_BOTTOM 65536	/* distinct bottom indices followed */
#define WAS_UNMAPPED 2		/* hb_flags of a free chunk given back (gc_priv.h, 7.2-8.2) */

int heap_peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int heap_walk(pid_t pid, const struct gc_layout *l, uint64_t bias,
	      int (*block_fn)(void *arg, uint64_t block, const uint8_t *hdr),
	      heap_free_fn free_fn, void *arg, struct heap_walk_stats *st,
	      char *err, size_t errlen)
{
	uint64_t top_addr = bias + l->arrays_vaddr + l->top_index_off;
	size_t ntop = (size_t)l->top_mask + 1, nbottom = (size_t)l->bottom_mask + 1;
	size_t hdr_len = l->hb_marks_off + (1u << (l->log_hblk - l->granule_shift)) + 1;
	size_t bi_len = l->bi_link_off + 8;
	uint64_t *top = calloc(ntop, sizeof(*top));
	uint64_t *seen = calloc(MAX_BOTTOM, sizeof(*seen));
	uint8_t *bi = malloc(bi_len), *hdr = malloc(hdr_len);
	size_t nseen = 0;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int ret = -1;

	if (!top || !seen || !bi || !hdr) {
		snprintf(err, errlen, "heap walk: out of memory");
		goto out;
	}
	if (heap_peek(pid, top_addr, top, ntop * sizeof(*top))) {
		snprintf(err, errlen, "cannot read GC_arrays._top_index at 0x%llx of pid %d: %s",
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
			if (heap_peek(pid, b, bi, bi_len)) {
				st->unreadable++;
				break;
			}
			memcpy(&key, bi + l->bi_key_off, sizeof(key));
			memcpy(&link, bi + l->bi_link_off, sizeof(link));
			for (size_t j = 0; j < nbottom; j++) {
				uint64_t h, block = (key << l->hi_shift) | (j << l->log_hblk);
				uint64_t sz, hb_block;

				memcpy(&h, bi + j * 8, sizeof(h));
				if (h <= MAX_JUMP)
					continue;
				if (heap_peek(pid, h, hdr, hdr_len)) {
					st->unreadable++;
					continue;
				}
				memcpy(&sz, hdr + l->hb_sz_off, sizeof(sz));
				memcpy(&hb_block, hdr + HB_BLOCK_OFF, sizeof(hb_block));
				/* a free chunk's header has no hb_block: its size
				 * is whole blocks */
				if (hdr[l->hb_flags_off] & l->free_blk) {
					if (free_fn && sz && !(sz & ((1ull << l->log_hblk) - 1)) &&
					    free_fn(arg, block, sz, hdr[l->hb_flags_off] & WAS_UNMAPPED))
						goto oom;
					continue;
				}
				if (!sz || hb_block != block) {
					st->unreadable++;
					continue;
				}
				st->blocks++;
				if (block_fn(arg, block, hdr)) {
oom:
					snprintf(err, errlen, "heap walk: out of memory");
					goto out;
				}
			}
			b = link;
		}
	}
	ret = 0;
out:
	st->walk_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	free(top);
	free(seen);
	free(bi);
	free(hdr);
	return ret;
}
