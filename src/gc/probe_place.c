// SPDX-License-Identifier: MIT
#include "gc/probe_place.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/x86_insn.h"

#define MAX_SCAN_INSNS 8

static bool is_reg(x86_reg r, x86_reg r64, x86_reg r32, x86_reg r16, x86_reg r8)
{
	return r == r64 || r == r32 || r == r16 || r == r8;
}

static bool clobbers(csh cs, const cs_insn *insn, unsigned args)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return true;
	for (int i = 0; i < nwr; i++) {
		x86_reg r = wr[i];

		if (is_reg(r, X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL) &&
		    !(args & PLACE_IP_ONLY))
			return true;
		if (is_reg(r, X86_REG_RIP, X86_REG_EIP, X86_REG_IP, X86_REG_INVALID))
			return true;
		if ((args & ARG_RDI) &&
		    is_reg(r, X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL))
			return true;
		if ((args & ARG_RSI) &&
		    is_reg(r, X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL))
			return true;
	}
	return false;
}

int probe_place_find(const uint8_t *code, size_t len, uint64_t vaddr,
		     unsigned args, struct probe_place *out)
{
	csh cs;
	cs_insn *insn;
	const uint8_t *p = code;
	size_t left = len;
	uint64_t addr = vaddr;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -1;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(cs);
	for (int n = 0; n < MAX_SCAN_INSNS; n++) {
		uint64_t at = addr;

		if (!cs_disasm_iter(cs, &p, &left, &addr, insn))
			break;
		if (x86_kernel_emulates(cs, insn)) {
			out->offset = at - vaddr;
			out->emulated = 1;
			snprintf(out->insn, sizeof(out->insn), "%s %s",
				 insn->mnemonic, insn->op_str);
			goto done;
		}
		/* Past a write to rsp or an argument the registers at the
		 * probe would no longer be the caller's. */
		if (clobbers(cs, insn, args) || cs_insn_group(cs, insn, X86_GRP_RET))
			break;
	}
	/* Nothing suitable: probe the entry, single-stepped but correct. */
	p = code;
	left = len;
	addr = vaddr;
	if (cs_disasm_iter(cs, &p, &left, &addr, insn))
		snprintf(out->insn, sizeof(out->insn), "%s %s", insn->mnemonic,
			 insn->op_str);
	else
		ret = -1;
done:
	cs_free(insn, 1);
	cs_close(&cs);
	return ret;
}
