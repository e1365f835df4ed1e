/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --sample refill: one probe where GC_malloc_kind returns from refilling a
 * thread's free list (see src/gc/refill_probe.h), none on the allocation fast
 * path. The refill's first object is the one being allocated: it is the
 * event's block, its stack the event's stack, and the event stands for the
 * whole list the refill built, weighted as (objects in the list) x (bytes
 * requested by this call): the collector's own accounting, in requested
 * rather than rounded bytes, so that totals compare with a full trace.
 * Medium and large objects leave GC_malloc_kind for GC_malloc_kind_global
 * on every call: that entry is probed like GC_malloc, every call recorded.
 */
#ifndef ALYS_REFILL_H
#define ALYS_REFILL_H

/* Set by the loader: the probe's ELF address and the DWARF numbers of the
 * registers holding the list's address, the size (or its stack slot, from
 * sp) and the kind (-1: none). */
const volatile __u64 refill_vaddr;
const volatile __s32 refill_fl_reg = -1;
const volatile __s32 refill_size_reg = -1;
const volatile __s32 refill_size_sp_off = -1;	/* when no register holds it */
const volatile __s32 refill_kind_reg = -1;

/* --duty: record only inside the window the daemon set (duty_cycle.h,
 * alys_sess.duty_*); 0: always. */
static __always_inline bool in_duty_window(struct alys_sess *S)
{
	__u64 now;

	if (!S->duty_until_ns)
		return true;
	now = bpf_ktime_get_ns();
	if (now >= S->duty_from_ns && now < S->duty_until_ns)
		return true;
	count(S->slot, ALYS_CNT_DUTY_OUTSIDE);
	return false;
}

/* GC_malloc_kind refills only small size classes (under 400 bytes): a
 * size read past a block's worth is not the request, the probe misplaced. */
#define REFILL_MAX_SIZE 4096

/* A refill hands out at most a block's worth (HBLKSIZE, 4 KiB by default):
 * 256 objects of 16 bytes; larger block sizes are counted as cut short. */
#define REFILL_MAX_OBJECTS 1024

/* The register numbered n (DWARF) at the probe, by its offset in pt_regs,
 * read through a helper: the compiler folds a switch of ctx loads into one
 * load at a variable offset, which the verifier refuses. */
const __u16 pt_regs_off[16] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),
	offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
};

static __always_inline __u64 reg_value(struct pt_regs *r, int n)
{
	__u64 v = 0;

	if (n < 0 || n > 15)
		return 0;
	bpf_probe_read_kernel(&v, sizeof(v), (char *)r + pt_regs_off[n & 15]);
	return v;
}

/* Objects on the free list starting at head (linked through their first
 * word, as the collector links them). */
static __always_inline __u32 list_length(struct alys_sess *S, __u64 head)
{
	__u64 p = head;
	__u32 n = 0;

	for (__u32 i = 0; i < REFILL_MAX_OBJECTS; i++) {
		if (!p)
			return n;
		n++;
		if (bpf_probe_read_user(&p, sizeof(p), (void *)p))
			return n;
	}
	if (p)
		count(S->slot, ALYS_CNT_REFILL_CUT);
	return n;
}

/* GC_all_interior_pointers (an int), for GC_realloc's slop; 0: not
 * exported, assume 1 (libgc's default). */
const volatile __u64 aip_vaddr;

/* Whether GC_realloc(p, lb) will return p itself (bdwgc's mallocx.c): the
 * request plus its slop fits the block (a large one rounded up to whole
 * heap blocks) and is at least half of it. Such a realloc allocates
 * nothing, so no refill sees it; a full trace counts it as an allocation
 * of lb bytes. */
static __always_inline bool realloc_in_place(__u64 bias, __u64 p, __u64 lb)
{
	__u64 hdr, sz, hblk = 1ULL << (log_hblk & 63);
	__s32 aip = 1;

	if (live_mode != ALYS_LIVE_MARKS ||
	    find_header(bias + arrays_vaddr, p, &hdr) || hdr < hblk ||
	    !read_u64(&sz, hdr + hb_sz_off))
		return false;
	if (sz > hblk / 2)
		sz = (sz + hblk - 1) & ~(hblk - 1);
	if (aip_vaddr)
		bpf_probe_read_user(&aip, sizeof(aip), (void *)(bias + aip_vaddr));
	return lb + (aip != 0) <= sz && lb >= sz / 2;
}

static __always_inline __u8 kind_of_gc_kind(__u64 gc_kind)
{
	return (__u32)gc_kind == 0 ? ALYS_KIND_MALLOC_ATOMIC : ALYS_KIND_MALLOC;
}
#endif
