// SPDX-License-Identifier: MIT
#include "base/cpu_paging.h"

#include <stdbool.h>
#include <string.h>

uint64_t cpu_paging_pfn_mask(FILE *f)
{
	char line[8192];
	unsigned bits = 0;
	bool la57 = false, flags = false;

	/* the first CPU's lines are every CPU's */
	while (!(flags && bits) && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "flags", 5) && strchr(line, ':')) {
			flags = true;
			la57 = strstr(line, " la57 ") || strstr(line, " la57\n");
		}
		(void)sscanf(line, "address sizes : %u bits physical", &bits);
	}
	if (!flags || la57 || bits < 32 || bits > 52)
		return 0;
	return ((1ull << bits) - 1) & ~4095ull;
}
