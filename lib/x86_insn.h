/* SPDX-License-Identifier: MIT */
/* x86-64 facts the code readers share (capstone register and instruction ids). */
#ifndef ALYS_X86_INSN_H
#define ALYS_X86_INSN_H

#include <capstone/capstone.h>
#include <stdbool.h>

/* The 64-bit register holding r (eax -> rax), or r itself. */
x86_reg x86_reg64(x86_reg r);
/* The register's DWARF number (0 rax, 1 rdx, ... 15 r15), -1 if none. */
int x86_dwarf_regno(x86_reg r);
/* Whether a uprobe on insn is emulated by the kernel (cheap) rather than
 * single-stepped out of line. */
bool x86_kernel_emulates(csh cs, const cs_insn *insn);

#endif
