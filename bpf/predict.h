/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The block an allocation will return, read at its entry, so that the call
 * needs no return probe: one trap instead of two (the return's ~0.6 µs of
 * the ~1.5 µs two empty probes cost a call here, bench/RESULTS.md).
 *
 * GC_malloc and GC_malloc_atomic of a libgc built with thread-local
 * allocation (GC_malloc_kind in thread_local_alloc.c, GC_FAST_MALLOC_GRANS)
 * take a small object off the calling thread's free list for its
 * granules when that list's head is a block, not a count: the head is what
 * they return. Nothing else runs on the thread between the probe and that
 * pop, and no other thread changes its lists. The lists are found through
 * GC_thread_key, the __thread pointer to the thread's struct
 * thread_local_freelists (src/gc/gc_vars.h says where it lives).
 *
 * Only checked, not assumed: a thread's first PREDICT_CHECK_FIRST blocks,
 * and one in PREDICT_CHECK_EVERY after, still take the return probe, which
 * compares; one wrong turns reading off in the session for good (counted).
 */
#ifndef ALYS_PREDICT_H
#define ALYS_PREDICT_H

/* Set by the loader: enum alys_tls_mode, 0 (none) reads nothing. */
const volatile __u32 predict_tls;
const volatile __s64 predict_tpoff;		/* STATIC: GC_thread_key - fs base */
const volatile __u64 predict_modid_vaddr;	/* DTV: the GOT slot of libgc's module id */
const volatile __u64 predict_dtpoff;		/* DTV: GC_thread_key in the module's block */
/* Tests: every block read is checked at the return (none finished at
 * entry); each block read taken this many bytes off (as a wrong layout
 * would give: caught). */
const volatile bool predict_check_all;
const volatile __u32 predict_skew;

#define PREDICT_CHECK_FIRST 16
#define PREDICT_CHECK_EVERY 4096

/* bdwgc's free lists a thread has for each kind (TINY_FREELISTS: 16-byte
 * granules, 0 to 24), kinds PTRFREE 0 and NORMAL 1 first in the struct. */
#define GC_TINY_FREELISTS 25
/* Below this a head is a count or NULL (DIRECT_GRANULES + TINY_FREELISTS +
 * 1 = 282 with 4 KiB blocks): never a block. */
#define PREDICT_MIN_BLOCK 65536

/* Where this thread's GC_thread_key lives: found once per thread and
 * address space (an exec keeps the task, not its TLS). */
static __always_inline __u64 thread_key_addr(struct thread_state *st, __u64 bias)
{
	struct task_struct *task = bpf_get_current_task_btf();
	/* direct loads: the task is trusted (BTF), no helper call */
	__u64 mm = (__u64)task->mm, fs, dtv, modid, block;

	if (st->key_addr && st->key_mm == mm)
		return st->key_addr;
	fs = task->thread.fsbase;
	if (!fs)
		return 0;
	if (predict_tls == ALYS_TLS_STATIC) {
		st->key_addr = fs + (__u64)predict_tpoff;
	} else {
		/* glibc's tcbhead_t: the DTV second; a DTV entry is 16 bytes,
		 * its first word the module's block (-1: not allocated) */
		if (bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(fs + 8)) ||
		    bpf_probe_read_user(&modid, sizeof(modid), (void *)(bias + predict_modid_vaddr)) ||
		    !modid || modid > 65536 ||
		    bpf_probe_read_user(&block, sizeof(block), (void *)(dtv + modid * 16)) ||
		    !block || block == ~0ULL)
			return 0;
		st->key_addr = block + predict_dtpoff;
	}
	st->key_mm = mm;
	return st->key_addr;
}

/* The block this GC_malloc (kind MALLOC) or GC_malloc_atomic of size
 * bytes will return; 0 when it will not come off the thread's free list,
 * or that cannot be told. */
static __always_inline __u64 predict_block(struct alys_sess *S, struct thread_state *st,
					   __u8 kind, __u64 bias, __u64 size)
{
	__u64 key, tsd, head, g;
	__s32 aip;

	if (!predict_tls || S->predict_off || size >> 32)
		return 0;
	key = thread_key_addr(st, bias);
	if (!key || bpf_probe_read_user(&tsd, sizeof(tsd), (void *)key) || !tsd)
		return 0;
	/* EXTRA_BYTES: fixed by GC_init, before any thread has lists */
	if (!st->extra_bytes) {
		if (bpf_probe_read_user(&aip, sizeof(aip), (void *)(bias + aip_vaddr)))
			return 0;
		st->extra_bytes = aip ? 2 : 1;
	}
	/* ROUNDED_UP_GRANULES; 25 granules and up are not on a thread's lists */
	g = size + 15 + st->extra_bytes - 1;
	if (g >= GC_TINY_FREELISTS * 16)
		return 0;
	g = ((kind == ALYS_KIND_MALLOC ? 1 : 0) * GC_TINY_FREELISTS + (g >> 4)) * 8;
	if (bpf_probe_read_user(&head, sizeof(head), (void *)(tsd + g)) ||
	    head < PREDICT_MIN_BLOCK)
		return 0;
	return head + predict_skew;
}

/* Whether a block read at entry is trusted (the call finished there), or
 * checked by the return probe. */
static __always_inline bool predict_trusted(struct thread_state *st)
{
	__u32 n = ++st->predicted;

	return !predict_check_all && n > PREDICT_CHECK_FIRST && (n & (PREDICT_CHECK_EVERY - 1));
}

/* At the return of a call whose block was read at entry. */
static __always_inline void predict_check(struct alys_sess *S, __u64 predicted, __u64 ret)
{
	count(S->slot, ALYS_CNT_PREDICT_CHECKED);
	if (predicted != ret) {
		count(S->slot, ALYS_CNT_PREDICT_WRONG);
		S->predict_off = 1;
	}
}

#endif
