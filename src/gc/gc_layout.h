/* SPDX-License-Identifier: MIT */
/*
 * Where the Boehm collector keeps its mark bytes, derived from the machine
 * code of the libgc in use (shared libgc.so or linked into the executable):
 * HDR(p) goes GC_arrays._top_index[(p >> hi_shift) & top_mask] -> bottom
 * index (key, hash_link) -> index[(p >> log_hblk) & bottom_mask] -> block
 * header (hb_sz, hb_flags, hb_marks[]). Offsets differ between builds, so
 * they are read out of GC_is_marked, GC_size and GC_base, never assumed.
 * The BPF program checks them again on the first allocations (bpf/live.h).
 */
#ifndef ALYS_GC_LAYOUT_H
#define ALYS_GC_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;

struct gc_layout {
	uint64_t arrays_vaddr;		/* GC_arrays */
	uint64_t arrays_size;		/* ... its size: the collector's own state */
	uint32_t version;		/* GC_version (major << 16 | minor << 8 | micro), 0: none */
	uint32_t top_index_off;		/* GC_arrays._top_index */
	uint32_t bi_key_off;		/* bottom_index.key */
	uint32_t bi_link_off;		/* bottom_index.hash_link */
	uint32_t hb_sz_off;		/* hblkhdr.hb_sz */
	uint32_t hb_flags_off;		/* hblkhdr.hb_flags (a byte) */
	uint32_t hb_marks_off;		/* hblkhdr.hb_marks[] (mark bytes) */
	uint32_t free_blk;		/* hb_flags bit of a free block */
	uint32_t top_mask, bottom_mask;
	uint8_t hi_shift;		/* LOG_HBLKSIZE + LOG_BOTTOM_SZ */
	uint8_t log_hblk;		/* LOG_HBLKSIZE */
	uint8_t granule_shift;		/* one mark byte per granule */
};

/*
 * Derives the layout from ef's code. 0 on success; -1 with the reason in
 * why (the caller falls back to address reuse and says so).
 */
int gc_layout_derive(struct elf_file *ef, struct gc_layout *l, char *why, size_t whylen);

/* One line for -v. */
void gc_layout_describe(const struct gc_layout *l, char *buf, size_t len);

#endif
