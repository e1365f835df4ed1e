/* SPDX-License-Identifier: MIT */
/*
 * The collector's own count of bytes allocated in a running target, read
 * from its memory: GC_get_total_bytes() sums two words (found by
 * gc_total_bytes_derive), read here with process_vm_readv at their runtime
 * addresses. --duty weighs its windows by it.
 */
#ifndef ALYS_GC_COUNT_H
#define ALYS_GC_COUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct gc_probes;

struct gc_count {
	pid_t pid;
	const struct gc_probes *gp;
	bool bias_known;
	uint64_t bias;		/* load bias of the file holding libgc */
	uint64_t last;		/* the last value read */
};

void gc_count_init(struct gc_count *c, pid_t pid, const struct gc_probes *gp);
/* The count now; once the target is gone, the last one read. False if it
 * was never read. */
bool gc_count_read(struct gc_count *c, uint64_t *total);

#endif
