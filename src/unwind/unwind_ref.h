/* SPDX-License-Identifier: MIT */
/*
 * Userspace reference unwinder over the compact tables of unwind_table.h.
 * It implements exactly the algorithm the BPF program runs, so that tests
 * can check tables against real stacks and the BPF side has a model:
 *
 *   state: pc = regs.ip, sp = regs.sp, bp = regs.bp, bp_valid = 1
 *   ips[0] = pc
 *   for frame n = 0, 1, ... while n + 1 < max:
 *     lookup = (n == 0) ? pc : pc - 1        // a return address points after
 *                                             // the call; pc-1 is inside it
 *     mapping m with m.start <= lookup < m.end, else stop NO_MAPPING
 *     row = last row of m.table with row.pc <= lookup - m.bias
 *           (none, i.e. below the first row: stop END)
 *     switch row.cfa_type:
 *       END:          stop END
 *       OUTERMOST:    stop OUTERMOST            // normal bottom of the stack
 *       UNSUPPORTED:  stop UNSUPPORTED
 *       RSP:          cfa = sp + row.cfa_offset
 *       RBP:          if (!bp_valid) stop BP_UNKNOWN
 *                     cfa = bp + row.cfa_offset
 *       PLT:          cfa = sp + 8 + ((pc & 15) >= 11 ? 8 : 0)
 *                     (pc, not lookup: the expression reads rip; PLT entries
 *                     are 16-aligned in the file and the bias is page-aligned)
 *     if cfa <= sp: stop NO_PROGRESS           // stacks grow down; guarantees
 *                                             // termination
 *     ra = read_u64(cfa - 8)                 else stop READ_FAIL
 *     switch row.rbp_type:
 *       SAME:         bp unchanged
 *       OFFSET:       bp = read_u64(cfa + row.rbp_offset), else stop READ_FAIL
 *       UNSUPPORTED:  bp_valid = 0            // only fatal if a later frame
 *                                             // needs an RBP-based CFA
 *     if ra == 0: stop RA_ZERO
 *     sp = cfa; pc = ra; ips[++n] = pc
 *   stop MAX_FRAMES when the array is full
 *
 * Returns the number of ips stored (>= 1 when max >= 1); *stop gets why the
 * walk ended.
 */
#ifndef ALYS_UNWIND_REF_H
#define ALYS_UNWIND_REF_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind_table.h"

/* One executable mapping of the target: runtime address = bias + file vaddr. */
struct alys_unwind_mapping {
	uint64_t start, end;
	uint64_t bias;
	const struct alys_unwind_table *table;
};

struct alys_unwind_regs {
	uint64_t ip, sp, bp;
};

enum alys_unwind_stop {
	ALYS_UNWIND_STOP_MAX_FRAMES = 0,
	ALYS_UNWIND_STOP_NO_MAPPING,
	ALYS_UNWIND_STOP_END,
	ALYS_UNWIND_STOP_OUTERMOST,
	ALYS_UNWIND_STOP_UNSUPPORTED,
	ALYS_UNWIND_STOP_BP_UNKNOWN,
	ALYS_UNWIND_STOP_NO_PROGRESS,
	ALYS_UNWIND_STOP_READ_FAIL,
	ALYS_UNWIND_STOP_RA_ZERO,
};

/* Reads len bytes of target memory at addr; returns 0 on success. */
typedef int (*alys_read_mem_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

int alys_unwind_ref(const struct alys_unwind_mapping *maps, size_t nmaps,
		    const struct alys_unwind_regs *regs, alys_read_mem_fn read_mem,
		    void *ctx, uint64_t *ips, int max, enum alys_unwind_stop *stop);

const char *alys_unwind_stop_name(enum alys_unwind_stop s);

#endif
