/* SPDX-License-Identifier: MIT */
/*
 * The collector's own count of bytes allocated in a running target, read
 * from its memory: GC_get_total_bytes() sums two words (found by
 * gc_total_bytes_derive, gc_vars.h), read here with process_vm_readv at
 * their runtime addresses. --duty weighs its windows by it; --census --pid
 * reads the start callback the same way.
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
/* The load bias of the file holding libgc in the target. */
bool gc_count_bias(struct gc_count *c, uint64_t *bias);
/* One word of the collector's state: its variable at vaddr in the file
 * holding libgc. False if the target cannot be read. */
bool gc_count_read_word(struct gc_count *c, uint64_t vaddr, uint64_t *value);

#endif
