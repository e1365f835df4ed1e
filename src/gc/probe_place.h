/* SPDX-License-Identifier: MIT */
/*
 * Where to put a uprobe inside a function. The kernel emulates a few x86
 * instructions at a breakpoint (push, jmp, call, jcc, nop) and single-steps
 * every other one out of line, which costs ~20x more per hit. We probe the
 * first emulated instruction reached before anything changes rsp or the
 * argument registers, so the arguments and the return address at [rsp] are
 * exactly as at entry (the uretprobe relies on the latter).
 */
#ifndef ALYS_PROBE_PLACE_H
#define ALYS_PROBE_PLACE_H

#include <stddef.h>
#include <stdint.h>

/* Argument registers a probe must still see: bit i = i-th SysV argument. */
#define ARG_RDI (1u << 0)
#define ARG_RSI (1u << 1)
/* The probe only needs its own address (GC_gcollect: the load bias), not
 * the caller's rsp or return address: any instruction reached on every
 * path will do. */
#define PLACE_IP_ONLY (1u << 7)

struct probe_place {
	uint64_t offset;	/* bytes from the function's start */
	int emulated;		/* 0: fell back to the entry (single-stepped) */
	char insn[192];		/* the probed instruction, for -v and tests */
};

/* code: the function's first bytes (at least 16 when the function has them). */
int probe_place_find(const uint8_t *code, size_t len, uint64_t vaddr,
		     unsigned args, struct probe_place *out);

#endif
