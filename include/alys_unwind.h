/* SPDX-License-Identifier: MIT */
/*
 * Compact unwind tables built by userspace from .eh_frame/.debug_frame and
 * walked by the BPF program. See docs/DESIGN.md.
 */
#ifndef ALYS_UNWIND_H
#define ALYS_UNWIND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum alys_cfa_type {		/* how to compute the CFA at this row */
	ALYS_CFA_END = 0,	/* no FDE covers pcs from here until the next row: stop */
	ALYS_CFA_RSP = 1,	/* CFA = rsp + cfa_offset */
	ALYS_CFA_RBP = 2,	/* CFA = rbp + cfa_offset */
	ALYS_CFA_PLT = 3,	/* CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) */
	ALYS_CFA_UNSUPPORTED = 4,	/* other register or a DWARF expression: stop */
	ALYS_CFA_OUTERMOST = 5,	/* return address undefined (_start, clone): bottom */
};

enum alys_rbp_type {
	ALYS_RBP_SAME = 0,
	ALYS_RBP_OFFSET = 1,	/* saved at CFA + rbp_offset */
	ALYS_RBP_UNSUPPORTED = 2,
};

struct alys_unwind_row {	/* 12 bytes */
	__u32 pc;		/* ELF vaddr; valid up to the next row's pc */
	__s32 cfa_offset;
	__s16 rbp_offset;
	__u8 cfa_type;
	__u8 rbp_type;
};

#endif /* ALYS_UNWIND_H */
