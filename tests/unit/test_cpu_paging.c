// SPDX-License-Identifier: MIT
/*
 * Unit test of what /proc/cpuinfo says of the page tables
 * (src/base/cpu_paging.c): the walks read the stack through the direct map
 * only on 4-level paging, with the physical address bits the CPU has.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/cpu_paging.h"
#include "unit_check.h"

static uint64_t mask_of(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	uint64_t m;

	if (!f)
		return UINT64_MAX;
	m = cpu_paging_pfn_mask(f);
	fclose(f);
	return m;
}

#define CPU0 "processor\t: 0\nvendor_id\t: GenuineIntel\n"
#define FLAGS "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep smap erms\n"
#define FLAGS57 "flags\t\t: fpu vme de pse la57 rdpid fsrm\n"
#define FLAGS57END "flags\t\t: fpu vme de pse rdpid la57\n"
#define SIZES46 "address sizes\t: 46 bits physical, 48 bits virtual\n"
#define SIZES52 "address sizes\t: 52 bits physical, 57 bits virtual\n"

int main(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");

	check("46 bits physical: bits 12 to 45", mask_of(CPU0 FLAGS SIZES46) == 0x00003ffffffff000ull);
	check("the address sizes' line before the flags' too",
	      mask_of(CPU0 SIZES46 FLAGS) == 0x00003ffffffff000ull);
	check("52 bits physical, 4-level: bits 12 to 51",
	      mask_of(CPU0 FLAGS SIZES52) == 0x000ffffffffff000ull);
	check("la57 among the flags: 5-level paging, 0", mask_of(CPU0 FLAGS57 SIZES52) == 0);
	check("la57 the last flag: 0", mask_of(CPU0 FLAGS57END SIZES52) == 0);
	check("no flags line: 0", mask_of(CPU0 SIZES46) == 0);
	check("no address sizes: 0", mask_of(CPU0 FLAGS) == 0);
	check("64 bits physical, implausible: 0",
	      mask_of(CPU0 FLAGS "address sizes\t: 64 bits physical, 48 bits virtual\n") == 0);
	check("an empty file: 0", mask_of("") == 0);
	check("a second CPU's lines do not count",
	      mask_of(CPU0 FLAGS SIZES46 "\nprocessor\t: 1\n" FLAGS57 SIZES52) ==
		      0x00003ffffffff000ull);
	/* this machine's: 4-level here (the e2e tests read its stacks so) */
	if (f) {
		uint64_t m = cpu_paging_pfn_mask(f);

		fclose(f);
		check("this machine's /proc/cpuinfo: a mask of 32 to 52 bits, page-aligned",
		      m && !(m & 4095) && (m >> 12) && !(m >> 52) && (m >> 31));
	} else {
		check("/proc/cpuinfo readable", 0);
	}
	return unit_summary();
}
