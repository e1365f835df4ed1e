/* SPDX-License-Identifier: MIT */
/*
 * What /proc/cpuinfo says of the page tables' entries: the physical
 * address bits of a 4-level x86-64 entry (bpf/direct_map.h reads them).
 */
#ifndef ALYS_CPU_PAGING_H
#define ALYS_CPU_PAGING_H

#include <stdint.h>
#include <stdio.h>

/* From a /proc/cpuinfo's text: the mask of an entry's physical address
 * bits (12 up to "address sizes"' physical bits), or 0: 5-level paging
 * (la57), no flags line, no or an implausible address size. */
uint64_t cpu_paging_pfn_mask(FILE *cpuinfo);

#endif
