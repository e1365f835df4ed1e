// SPDX-License-Identifier: MIT
#include "core/direct_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "alys_events.h"	/* before the skeleton, which uses its types */
#include "alys.skel.h"
#include "base/cpu_paging.h"

uint64_t direct_map_pfn_mask(void)
{
	const char *off = getenv("ALYS_BPF_NO_DIRECT_MAP");
	uint64_t mask;
	FILE *f;

	if (off && *off)
		return 0;
	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return 0;
	mask = cpu_paging_pfn_mask(f);
	fclose(f);
	return mask;
}

void direct_map_finder(struct alys_bpf *skel)
{
	struct stat st;

	skel->rodata->direct_map_finder = (__u32)getpid();
	skel->rodata->direct_map_finder_ns_dev = skel->rodata->direct_map_finder_ns_ino = 0;
	if (stat("/proc/self/ns/pid", &st) == 0) {
		skel->rodata->direct_map_finder_ns_dev = st.st_dev;
		skel->rodata->direct_map_finder_ns_ino = st.st_ino;
	}
}

uint64_t direct_map_find(struct alys_bpf *skel)
{
	struct bpf_link *l;

	if (!skel->rodata->direct_map_pfn_mask || bpf_program__fd(skel->progs.find_direct_map) < 0)
		return 0;
	l = bpf_program__attach_tracepoint(skel->progs.find_direct_map, "syscalls",
					   "sys_enter_getppid");
	if (!l)
		return 0;
	syscall(SYS_getppid);
	bpf_link__destroy(l);
	return skel->bss->direct_map_base;
}
