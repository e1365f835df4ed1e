// SPDX-License-Identifier: MIT
#include "gc/heap_walk.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "base/clock_ns.h"

#define MAX_JUMP 4095		/* smaller hdr pointers are forwarding counts */
#define MAX_BOTTOM 65536	/* distinct bottom indices followed */
#define HDR_BATCH 256		/* headers a process_vm_readv reads (IOV_MAX: 1024) */
#define WAS_UNMAPPED 2		/* hb_flags of a free chunk given back (gc_priv.h, 7.2-8.2) */

int heap_peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The headers at h[0..n) into buf (hdr_len bytes each), ok[i] when whole:
 * one process_vm_readv a batch. A read stops at the first header it cannot
 * read whole (never splitting one): that one is skipped, the rest read on. */
static void read_headers(pid_t pid, const uint64_t *h, size_t n, uint8_t *buf, size_t hdr_len,
			 bool *ok)
{
	struct iovec local[HDR_BATCH], remote[HDR_BATCH];
	size_t i = 0;

	while (i < n) {
		size_t k = n - i < HDR_BATCH ? n - i : HDR_BATCH, whole;
		ssize_t got;

		for (size_t j = 0; j < k; j++) {
			local[j] = (struct iovec){ buf + (i + j) * hdr_len, hdr_len };
			remote[j] = (struct iovec){ (void *)h[i + j], hdr_len };
		}
		got = process_vm_readv(pid, local, k, remote, k, 0);
		whole = got > 0 ? (size_t)got / hdr_len : 0;
		for (size_t j = 0; j < whole; j++)
			ok[i + j] = true;
		i += whole;
		if (i < n && whole < k)
			ok[i++] = false;
	}
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
	uint8_t *bi = malloc(bi_len), *hdrs = malloc(nbottom * hdr_len);
	uint64_t *hs = malloc(nbottom * sizeof(*hs)), *blocks = malloc(nbottom * sizeof(*blocks));
	bool *ok = malloc(nbottom * sizeof(*ok));
	size_t nseen = 0;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int ret = -1;

	if (!top || !seen || !bi || !hdrs || !hs || !blocks || !ok) {
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
			size_t k, n = 0;
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
				uint64_t h;

				memcpy(&h, bi + j * 8, sizeof(h));
				if (h <= MAX_JUMP)
					continue;
				hs[n] = h;
				blocks[n++] = (key << l->hi_shift) | (j << l->log_hblk);
			}
			read_headers(pid, hs, n, hdrs, hdr_len, ok);
			for (size_t j = 0; j < n; j++) {
				const uint8_t *hdr = hdrs + j * hdr_len;
				uint64_t sz, hb_block, block = blocks[j];

				if (!ok[j]) {
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
	free(hdrs);
	free(hs);
	free(blocks);
	free(ok);
	return ret;
}
