// SPDX-License-Identifier: MIT
#include "lib/x86_insn.h"

#include <stddef.h>

/* The 64-bit register holding r (eax -> rax), or r itself. */
x86_reg x86_reg64(x86_reg r)
{
	static const x86_reg map[][4] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		for (int j = 0; j < 4; j++)
			if (map[i][j] == r)
				return map[i][0];
	return r;
}

static bool only_rex_prefix(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	for (int i = 0; i < 4; i++)
		if (x->prefix[i])
			return false;
	return true;
}

/* Mirrors arch/x86/kernel/uprobes.c: branch_setup_xol_ops (call/jmp/jcc
 * with relative targets), push_setup_xol_ops (push reg) and nop emulation. */
bool x86_kernel_emulates(csh cs, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	if (!only_rex_prefix(insn))
		return false;
	if (cs_insn_group(cs, insn, X86_GRP_JUMP) || insn->id == X86_INS_CALL) {
		if (insn->id == X86_INS_JRCXZ || insn->id == X86_INS_JECXZ ||
		    insn->id == X86_INS_JCXZ || insn->id == X86_INS_LOOP ||
		    insn->id == X86_INS_LOOPE || insn->id == X86_INS_LOOPNE)
			return false;
		return x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
	}
	if (insn->id == X86_INS_PUSH)
		return x->op_count == 1 && x->operands[0].type == X86_OP_REG &&
		       x->operands[0].size == 8;
	return insn->id == X86_INS_NOP && insn->size == 1;
}

/* DWARF numbers of the 16 general registers (the order of the x86-64 psABI). */
int x86_dwarf_regno(x86_reg r)
{
	static const x86_reg order[16] = {
		X86_REG_RAX, X86_REG_RDX, X86_REG_RCX, X86_REG_RBX,
		X86_REG_RSI, X86_REG_RDI, X86_REG_RBP, X86_REG_RSP,
		X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
		X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};

	r = x86_reg64(r);
	for (int i = 0; i < 16; i++)
		if (order[i] == r)
			return i;
	return -1;
}
