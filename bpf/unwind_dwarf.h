/* SPDX-License-Identifier: GPL-2.0 */
/* Placeholder until the .eh_frame unwinder lands: frame pointers. */
#ifndef ALYS_UNWIND_DWARF_H
#define ALYS_UNWIND_DWARF_H

static __always_inline void unwind_dwarf(struct pt_regs *regs,
					 struct stack_val *s)
{
	unwind_fp(regs, s);
}

#endif
