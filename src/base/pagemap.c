/* SPDX-License-Identifier: MIT */
#include "base/pagemap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define PAGE 4096ull
#define PM_PRESENT (1ull << 63)
#define BATCH 4096	/* entries per read: 16 MiB of memory, 32 KiB read */

int pagemap_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int pagemap_resident(int fd, uint64_t start, uint64_t end, uint64_t *bytes)
{
	static __thread uint64_t e[BATCH];
	uint64_t p = start / PAGE, last = (end + PAGE - 1) / PAGE;

	while (p < last) {
		size_t want = last - p < BATCH ? (size_t)(last - p) : BATCH;
		ssize_t got = pread(fd, e, want * 8, (off_t)(p * 8));

		if (got <= 0) {
			if (!got)
				errno = ESRCH;
			return -1;
		}
		for (ssize_t i = 0; i < got / 8; i++)
			if (e[i] & PM_PRESENT)
				*bytes += PAGE;
		p += (uint64_t)got / 8;
	}
	return 0;
}
