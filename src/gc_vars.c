// SPDX-License-Identifier: MIT
#include "gc_vars.h"

#include <capstone/capstone.h>
#include <stdio.h>

#include "elf_file.h"
#include "x86_insn.h"

/* The code of the exported getter name, disassembled with details into
 * *in (cs_free(*in, n) and cs_close(cs) after use); 0 with why on failure. */
static size_t disasm_getter(struct elf_file *ef, const char *name, csh *cs, cs_insn **in,
			    char *why, size_t whylen)
{
	GElf_Addr fn;
	GElf_Xword size = 0;
	const uint8_t *code;
	size_t n;

	if (!elf_file_find_symbol(ef, name, &fn, &size) || !size || size > 256 ||
	    !(code = elf_file_bytes_at(ef, fn, size))) {
		snprintf(why, whylen, "%s does not define %s", ef->path, name);
		return 0;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK) {
		snprintf(why, whylen, "capstone cannot be opened");
		return 0;
	}
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(*cs, code, size, fn, 0, in);
	if (!n) {
		snprintf(why, whylen, "%s in %s cannot be disassembled", name, ef->path);
		cs_close(cs);
	}
	return n;
}

int gc_total_bytes_derive(struct elf_file *ef, uint64_t vaddr[2], char *why, size_t whylen)
{
	uint64_t base[16] = { 0 };	/* a register's known address, by DWARF number */
	cs_insn *in = NULL;
	int found = 0;
	csh cs;
	size_t n = disasm_getter(ef, "GC_get_total_bytes", &cs, &in, why, whylen);

	if (!n)
		return -1;
	/* mov slot(%rip), R (R = &GC_arrays); then mov/add disp(R) or
	 * disp(%rip) into rax: the two words summed. */
	for (size_t i = 0; i < n && !cs_insn_group(cs, &in[i], X86_GRP_RET); i++) {
		const cs_x86 *x = &in[i].detail->x86;
		const cs_x86_op *m = &x->operands[1];
		int dst = x86_dwarf_regno(x->operands[0].reg);
		uint64_t addr;

		if (x->op_count != 2 || x->operands[0].type != X86_OP_REG || dst < 0 ||
		    m->type != X86_OP_MEM || m->mem.index != X86_REG_INVALID ||
		    (in[i].id != X86_INS_MOV && in[i].id != X86_INS_ADD))
			continue;
		if (m->mem.base == X86_REG_RIP)
			addr = in[i].address + in[i].size + (uint64_t)m->mem.disp;
		else if (x86_dwarf_regno(m->mem.base) >= 0 && base[x86_dwarf_regno(m->mem.base)])
			addr = base[x86_dwarf_regno(m->mem.base)] + (uint64_t)m->mem.disp;
		else
			continue;
		if (dst != 0 && in[i].id == X86_INS_MOV && m->mem.base == X86_REG_RIP &&
		    elf_file_slot_value(ef, addr, &base[dst]))
			continue;
		if (dst == 0 && found < 2)
			vaddr[found++] = addr;
	}
	cs_free(in, n);
	cs_close(&cs);
	if (found != 2) {
		snprintf(why, whylen, "GC_get_total_bytes in %s is not two loads summed",
			 ef->path);
		return -1;
	}
	return 0;
}

int gc_start_callback_derive(struct elf_file *ef, uint64_t *vaddr, char *why, size_t whylen)
{
	/* by DWARF number: the address a register holds (GOT), or the
	 * variable whose value it holds */
	uint64_t addr_in[16] = { 0 }, value_of[16] = { 0 };
	GElf_Addr var;
	GElf_Xword size = 0;
	cs_insn *in = NULL;
	size_t n;
	csh cs;

	*vaddr = 0;
	if (elf_file_find_symbol(ef, "GC_start_call_back", &var, &size) && size == 8) {
		*vaddr = var;
		return 0;
	}
	n = disasm_getter(ef, "GC_get_start_callback", &cs, &in, why, whylen);
	if (!n)
		return -1;
	/* Loads of the variable (through the GOT or not), moves between
	 * registers, until the first return: what rax holds then. */
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &in[i].detail->x86;
		const cs_x86_op *d = &x->operands[0], *m = &x->operands[1];
		int dst = x->op_count == 2 && d->type == X86_OP_REG && d->size == 8 ?
			  x86_dwarf_regno(d->reg) : -1;
		uint64_t a;

		if (cs_insn_group(cs, &in[i], X86_GRP_RET)) {
			*vaddr = value_of[0];
			break;
		}
		if (in[i].id != X86_INS_MOV || dst < 0)
			continue;
		if (m->type == X86_OP_REG && x86_dwarf_regno(m->reg) >= 0) {
			addr_in[dst] = addr_in[x86_dwarf_regno(m->reg)];
			value_of[dst] = value_of[x86_dwarf_regno(m->reg)];
			continue;
		}
		addr_in[dst] = value_of[dst] = 0;
		if (m->type != X86_OP_MEM || m->mem.index != X86_REG_INVALID)
			continue;
		if (m->mem.base == X86_REG_RIP) {
			a = in[i].address + in[i].size + (uint64_t)m->mem.disp;
			if (!elf_file_slot_value(ef, a, &addr_in[dst]))
				value_of[dst] = a;	/* no relocation: the variable */
		} else if (x86_dwarf_regno(m->mem.base) >= 0 &&
			   addr_in[x86_dwarf_regno(m->mem.base)]) {
			value_of[dst] = addr_in[x86_dwarf_regno(m->mem.base)] + (uint64_t)m->mem.disp;
		}
	}
	cs_free(in, n);
	cs_close(&cs);
	if (!*vaddr) {
		snprintf(why, whylen, "GC_get_start_callback in %s does not return a variable "
			 "this reader follows", ef->path);
		return -1;
	}
	return 0;
}
