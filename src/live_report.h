/* SPDX-License-Identifier: MIT */
/*
 * --interval: live bytes by allocation site while tracing, like bcc
 * memleak's periodic output. Blocks are followed from their allocation
 * event to their free (called, or inferred after a collection), and sites
 * are named when their stack first arrives, while the process still runs.
 */
#ifndef ALYS_LIVE_REPORT_H
#define ALYS_LIVE_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "u64_table.h"

struct live_stack;
struct live_namer {
	char *module;			/* its file */
	struct crystal_namer *namer;
};

struct live_report {
	pid_t pid;
	void *dwfl;			/* Dwfl *, over /proc/PID/maps */
	struct u64_table blocks;	/* addr -> stack slot << 40 | weight */
	struct u64_table slot_of;	/* stack id -> slot + 1 */
	struct live_stack *stacks;	/* slot 0: events without a stack */
	size_t n, cap;
	struct live_namer *namers;	/* display names, by module */
	size_t nr_namers;
	uint32_t gc_no;			/* last collection read */
	uint64_t reports;
};

void live_report_init(struct live_report *lr, pid_t pid);
void live_report_free(struct live_report *lr);
void live_report_stack(struct live_report *lr, uint32_t id, const uint64_t *ips, uint32_t nr);
void live_report_alloc(struct live_report *lr, uint64_t addr, uint32_t stack_id, uint64_t weight);
void live_report_drop(struct live_report *lr, uint64_t addr);
/* The top sites by live bytes, to out. */
void live_report_print(struct live_report *lr, FILE *out, unsigned top, double elapsed_s);

#endif
