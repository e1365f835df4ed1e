/* SPDX-License-Identifier: MIT */
/*
 * Keys of stack prefixes, the one definition the kernel (bpf/alys.bpf.c) and
 * the daemon (src/unwind/stack_table.c) compute alike. Traces hold the
 * daemon's node ids, not keys: the mix may change without a format change.
 *
 * Stacks form a tree rooted at the outermost frame: the key of a prefix of k
 * frames (counted from the outermost) is mixed from the key of its k-1 frame
 * parent and its innermost frame. The root's key depends on the stack's
 * flags only, so a truncated stack never shares nodes with a whole one. A
 * key names a node for the whole trace; the daemon detects collisions (two
 * nodes with one key) by comparing the parent and frame it stored.
 */
#ifndef ALYS_STACK_KEY_H
#define ALYS_STACK_KEY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

static inline __u64 alys_stack_root_key(__u32 flags)
{
	return 0x9e3779b97f4a7c15ULL ^ ((__u64)flags << 56);
}

/* One multiply on the chain: a stack's keys are made one from the other
 * (all 127 of them when a cut stack's window moves, a quarter of the
 * compiler's events), so the chain's latency is their cost; the frame's own
 * product is off it. Bijective in each argument (odd multipliers, a
 * rotation): one parent's children, or one frame under two parents, never
 * share a key (but for 0 made 1). The rotation brings the parent's
 * well-mixed high bits down to the low ones the kernel's cache indexes by.
 * Never 0, the "no stack" key. */
static inline __u64 alys_stack_child_key(__u64 parent, __u64 ip)
{
	__u64 h = ((parent << 27 | parent >> 37) ^ ip * 0x87c37b91114253d5ULL) *
		  0x4cf5ad432745937fULL;

	return h ? h : 1;
}

#endif /* ALYS_STACK_KEY_H */
