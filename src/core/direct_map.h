/* SPDX-License-Identifier: MIT */
/*
 * Whether the walks may read the target's stack through the kernel's
 * direct map (bpf/direct_map.h) instead of copying it: the loader's part.
 */
#ifndef ALYS_DIRECT_MAP_H
#define ALYS_DIRECT_MAP_H

#include <stdint.h>

struct alys_bpf;

/* The physical address bits of a page-table entry on this machine, for
 * the object's direct_map_pfn_mask; 0: not to be used (5-level paging,
 * /proc/cpuinfo unreadable, ALYS_BPF_NO_DIRECT_MAP set). */
uint64_t direct_map_pfn_mask(void);
/* Before load: this process as the object's find_direct_map knows it,
 * its pid in its own pid namespace and that namespace (/proc/self/ns/pid's
 * device and inode; 0 if unreadable: no task matches, spans are copied). */
void direct_map_finder(struct alys_bpf *skel);
/* After load: runs the object's find_direct_map once. Returns the
 * direct map's base (0: not found, the spans are copied). */
uint64_t direct_map_find(struct alys_bpf *skel);

#endif
