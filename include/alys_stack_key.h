/* SPDX-License-Identifier: MIT */
/*
 * Keys of stack prefixes, the one definition the kernel (bpf/alys.bpf.c), the
 * daemon (src/unwind/stack_table.c) and the converter (v1 traces) compute alike.
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

/* MurmurHash3's x64 block mix and finalizer: return addresses differ in few
 * low bits. Never 0, the "no stack" key. */
static inline __u64 alys_stack_child_key(__u64 parent, __u64 ip)
{
	__u64 k = ip * 0x87c37b91114253d5ULL, h = parent;

	k = (k << 31 | k >> 33) * 0x4cf5ad432745937fULL;
	h ^= k;
	h = (h << 27 | h >> 37) * 5 + 0x52dce729;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h ? h : 1;
}

#endif /* ALYS_STACK_KEY_H */
