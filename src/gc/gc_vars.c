// SPDX-License-Identifier: MIT
#include "gc/gc_vars.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alys_events.h"
#include "lib/elf_file.h"
#include "lib/util.h"
#include "lib/x86_insn.h"

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
	/* mov slot(%rip), R or lea GC_arrays(%rip), R (clang); then mov/add
	 * disp(R) or disp(%rip) into rax: the two words summed. */
	for (size_t i = 0; i < n && !cs_insn_group(cs, &in[i], X86_GRP_RET); i++) {
		const cs_x86 *x = &in[i].detail->x86;
		const cs_x86_op *m = &x->operands[1];
		int dst = x86_dwarf_regno(x->operands[0].reg);
		uint64_t addr;

		if (x->op_count != 2 || x->operands[0].type != X86_OP_REG || dst < 0 ||
		    m->type != X86_OP_MEM || m->mem.index != X86_REG_INVALID ||
		    (in[i].id != X86_INS_MOV && in[i].id != X86_INS_ADD && in[i].id != X86_INS_LEA))
			continue;
		if (in[i].id == X86_INS_LEA) {
			base[dst] = m->mem.base == X86_REG_RIP ?
				    in[i].address + in[i].size + (uint64_t)m->mem.disp : 0;
			continue;
		}
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

/* bdwgc's MAX_ROOT_SETS, compared with n_root_sets: 2048, or 8192 with
 * --enable-large-config (the official Crystal tarballs' libgc) */
static bool is_max_root_sets(int64_t v)
{
	return v == 2048 || v == 8192;
}

/*
 * In the code of GC_add_roots_inner: the 32-bit load of n_root_sets that
 * is compared with MAX_ROOT_SETS, and the two stores of a new entry's start
 * and end (D and D + 8 from one register, &GC_arrays + n * 32, or from
 * &GC_arrays indexed by n * 32 as clang writes it). Addresses are
 * rip-relative (static link) or from a register that holds &GC_arrays
 * (loaded from its GOT slot, or lea).
 */
static bool roots_in(struct elf_file *ef, csh cs, uint64_t fn, uint64_t arrays,
		     uint32_t *n_off, uint32_t *roots_off, uint32_t *max_sets)
{
	const uint8_t *code = elf_file_bytes_at(ef, fn, 512);
	uint64_t holds[16] = { 0 };	/* registers holding &GC_arrays (+0) */
	int64_t last_store_disp = -1;
	int last_store_base = -1, last_store_index = -1;
	bool have_n = false;
	cs_insn *in = NULL;
	size_t n;

	if (!code)
		return false;
	n = cs_disasm(cs, code, 512, fn, 0, &in);
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &in[i].detail->x86;
		const cs_x86_op *d = &x->operands[0], *m = &x->operands[1];
		int dr = x->op_count == 2 && d->type == X86_OP_REG ? x86_dwarf_regno(d->reg) : -1;
		uint64_t a = 0, v;

		if (x->op_count == 2 && m->type == X86_OP_MEM && m->mem.base == X86_REG_RIP)
			a = in[i].address + in[i].size + (uint64_t)m->mem.disp;
		/* R = &GC_arrays */
		if (dr >= 0 && in[i].id == X86_INS_LEA && a == arrays) {
			holds[dr] = 1;
			continue;
		}
		if (dr >= 0 && in[i].id == X86_INS_MOV && a && elf_file_slot_value(ef, a, &v) &&
		    v == arrays) {
			holds[dr] = 1;
			continue;
		}
		/* n = n_root_sets; cmp $MAX_ROOT_SETS */
		if (!have_n && dr >= 0 && (in[i].id == X86_INS_MOVSXD || in[i].id == X86_INS_MOV) &&
		    m->type == X86_OP_MEM && m->size == 4 && i + 1 < n &&
		    in[i + 1].id == X86_INS_CMP && in[i + 1].detail->x86.op_count == 2 &&
		    in[i + 1].detail->x86.operands[1].type == X86_OP_IMM &&
		    is_max_root_sets(in[i + 1].detail->x86.operands[1].imm)) {
			*max_sets = (uint32_t)in[i + 1].detail->x86.operands[1].imm;
			if (a > arrays)
				*n_off = (uint32_t)(a - arrays);
			else if (x86_dwarf_regno(m->mem.base) >= 0 &&
				 holds[x86_dwarf_regno(m->mem.base)] && m->mem.disp > 0)
				*n_off = (uint32_t)m->mem.disp;
			else
				continue;
			have_n = true;
			continue;
		}
		/* entry stores: mov REG, D(Rx) then mov REG, D + 8(Rx), in
		 * either order */
		if (have_n && in[i].id == X86_INS_MOV && x->op_count == 2 && d->type == X86_OP_MEM &&
		    m->type == X86_OP_REG && d->size == 8 &&
		    (d->mem.index == X86_REG_INVALID || d->mem.scale == 1) &&
		    d->mem.base != X86_REG_RIP && d->mem.disp > (int64_t)*n_off) {
			int b = x86_dwarf_regno(d->mem.base);
			int ix = d->mem.index == X86_REG_INVALID ? -1 : x86_dwarf_regno(d->mem.index);

			if (b == last_store_base && ix == last_store_index &&
			    (d->mem.disp == last_store_disp + 8 || d->mem.disp + 8 == last_store_disp)) {
				*roots_off = (uint32_t)(d->mem.disp < last_store_disp ? d->mem.disp
										  : last_store_disp);
				cs_free(in, n);
				return true;
			}
			last_store_base = b;
			last_store_index = ix;
			last_store_disp = d->mem.disp;
		}
		if (dr >= 0 && in[i].id != X86_INS_LEA)
			holds[dr] = 0;
	}
	if (n)
		cs_free(in, n);
	return false;
}

int gc_static_roots_derive(struct elf_file *ef, uint64_t arrays_vaddr, uint32_t *n_off,
			   uint32_t *roots_off, uint32_t *max_sets, char *why, size_t whylen)
{
	GElf_Addr fn;
	GElf_Xword size;
	cs_insn *in = NULL;
	csh cs;
	int ret = -1;
	size_t n = disasm_getter(ef, "GC_add_roots", &cs, &in, why, whylen);

	if (!n)
		return -1;
	if (elf_file_find_symbol(ef, "GC_add_roots_inner", &fn, &size) &&
	    roots_in(ef, cs, fn, arrays_vaddr, n_off, roots_off, max_sets))
		ret = 0;
	/* else the function GC_add_roots calls that checks MAX_ROOT_SETS */
	for (size_t i = 0; i < n && ret; i++) {
		const cs_x86_op *op = &in[i].detail->x86.operands[0];

		if (in[i].id == X86_INS_CALL && in[i].detail->x86.op_count == 1 &&
		    op->type == X86_OP_IMM &&
		    roots_in(ef, cs, (uint64_t)op->imm, arrays_vaddr, n_off, roots_off, max_sets))
			ret = 0;
	}
	cs_free(in, n);
	cs_close(&cs);
	if (ret)
		snprintf(why, whylen, "GC_add_roots in %s does not look like Boehm GC 7/8's",
			 ef->path);
	return ret;
}

/* Within section name (false when the file has none). */
static bool in_section(struct elf_file *ef, const char *name, uint64_t a)
{
	GElf_Addr at;
	size_t size;

	return elf_file_section(ef, name, &at, &size) && a >= at && a < at + size;
}

/* A direct call into .text (not the PLT): to a function of this file. */
static bool local_call(struct elf_file *ef, const cs_insn *in, uint64_t *to)
{
	const cs_x86 *x = &in->detail->x86;

	if (in->id != X86_INS_CALL || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*to = (uint64_t)x->operands[0].imm;
	return in_section(ef, ".text", *to) && !in_section(ef, ".plt", *to) &&
	       !in_section(ef, ".plt.sec", *to);
}

int gc_world_func_derive(struct elf_file *ef, const char *internal, const char *external,
			 uint64_t *vaddr, char *why, size_t whylen)
{
	GElf_Addr fn;
	cs_insn *in = NULL;
	size_t n;
	csh cs;

	*vaddr = 0;
	if (elf_file_find_symbol(ef, internal, &fn, NULL)) {
		*vaddr = fn;
		return 0;
	}
	/* A stripped libgc.so exports the lock-taking wrapper only: it calls
	 * the internal function first, the lock's slow path (a local call
	 * too) placed after it, pthread's calls through the PLT. */
	n = disasm_getter(ef, external, &cs, &in, why, whylen);
	if (!n)
		return -1;
	for (size_t i = 0; i < n && !*vaddr; i++) {
		uint64_t to;

		if (local_call(ef, &in[i], &to))
			*vaddr = to;
	}
	cs_free(in, n);
	cs_close(&cs);
	if (!*vaddr) {
		snprintf(why, whylen, "%s defines neither %s nor an %s calling it directly",
			 ef->path, internal, external);
		return -1;
	}
	return 0;
}

/* ---- GC_try_to_collect_inner in a stripped libgc.so ---- */

/* The direct local calls of .text, in address order, and the functions
 * they reach: a stripped file's function starts are its call targets. */
struct call_graph {
	struct { uint64_t site, target, fn; } *calls;	/* fn: the function holding site */
	size_t nr, cap;
	uint64_t *starts;		/* sorted, unique */
	size_t nr_starts;
};

static int by_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The function start at or before addr (0: none). */
static uint64_t function_of(const struct call_graph *g, uint64_t addr)
{
	size_t lo = 0, hi = g->nr_starts;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->starts[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? g->starts[lo - 1] : 0;
}

/* starts: the functions known otherwise (exported ones no local code
 * calls), so that the function before one does not seem to hold its code. */
static int call_graph_build(struct elf_file *ef, struct call_graph *g, const uint64_t *starts,
			    size_t nr_starts)
{
	GElf_Addr text;
	size_t size, left;
	const uint8_t *code, *p;
	uint64_t at;
	cs_insn *in;
	csh cs;

	memset(g, 0, sizeof(*g));
	if (!elf_file_section(ef, ".text", &text, &size) || size > (64u << 20) ||
	    !(code = elf_file_bytes_at(ef, text, size)) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -1;
	/* one instruction at a time, without details: a call rel32 is told
	 * by its bytes (e8), and a libgc's .text is ~30,000 instructions */
	cs_option(cs, CS_OPT_SKIPDATA, CS_OPT_ON);
	in = cs_malloc(cs);
	p = code;
	left = size;
	at = text;
	while (in && cs_disasm_iter(cs, &p, &left, &at, in)) {
		uint64_t t;
		int32_t rel;

		if (in->size != 5 || in->bytes[0] != 0xe8)
			continue;
		memcpy(&rel, &in->bytes[1], 4);
		t = in->address + 5 + (uint64_t)(int64_t)rel;
		if (t < text || t >= text + size)
			continue;
		g->calls = grow_array(g->calls, &g->cap, g->nr + 1, sizeof(*g->calls));
		g->calls[g->nr].site = in->address;
		g->calls[g->nr++].target = t;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&cs);
	g->starts = xcalloc(g->nr + nr_starts + 1, sizeof(*g->starts));
	for (size_t i = 0; i < g->nr; i++)
		g->starts[i] = g->calls[i].target;
	memcpy(&g->starts[g->nr], starts, nr_starts * sizeof(*starts));
	qsort(g->starts, g->nr + nr_starts, sizeof(*g->starts), by_addr);
	for (size_t i = 0; i < g->nr + nr_starts; i++)
		if (!g->nr_starts || g->starts[g->nr_starts - 1] != g->starts[i])
			g->starts[g->nr_starts++] = g->starts[i];
	/* each call's function, once */
	for (size_t i = 0; i < g->nr; i++)
		g->calls[i].fn = function_of(g, g->calls[i].site);
	return 0;
}

static void call_graph_free(struct call_graph *g)
{
	free(g->calls);
	free(g->starts);
}

/* Whether function fn calls target directly. */
static bool calls_to(const struct call_graph *g, uint64_t fn, uint64_t target)
{
	for (size_t i = 0; i < g->nr; i++)
		if (g->calls[i].target == target && g->calls[i].fn == fn)
			return true;
	return false;
}

/* Whether function fn calls target, or a function that does. */
static bool reaches(const struct call_graph *g, uint64_t fn, uint64_t target)
{
	for (size_t i = 0; i < g->nr; i++) {
		uint64_t t = g->calls[i].target;

		if (g->calls[i].fn != fn)
			continue;
		if (t == target || (t != fn && calls_to(g, t, target)))
			return true;
	}
	return false;
}

/* The first function fn calls (0: none). */
static uint64_t first_call(const struct call_graph *g, uint64_t fn)
{
	for (size_t i = 0; i < g->nr; i++)
		if (g->calls[i].fn == fn)
			return g->calls[i].target;
	return 0;
}

int gc_collect_inner_derive(struct elf_file *ef, uint64_t stop_world, uint64_t *vaddr,
			    char *why, size_t whylen)
{
	struct call_graph g;
	uint64_t general;
	GElf_Addr fn;

	*vaddr = 0;
	if (elf_file_find_symbol(ef, "GC_try_to_collect_inner", &fn, NULL)) {
		*vaddr = fn;
		return 0;
	}
	if (!stop_world || !elf_file_find_symbol(ef, "GC_gcollect", &fn, NULL)) {
		snprintf(why, whylen, "%s names neither GC_try_to_collect_inner nor GC_gcollect",
			 ef->path);
		return -1;
	}
	if (call_graph_build(ef, &g, (const uint64_t[]){ fn }, 1)) {
		snprintf(why, whylen, "%s: its .text cannot be disassembled", ef->path);
		return -1;
	}
	/* GC_gcollect calls GC_try_to_collect_general first (or has it
	 * inlined), which takes the lock and calls GC_try_to_collect_inner:
	 * of its calls, the first that reaches GC_stop_world through
	 * GC_stopped_mark (or directly, that one inlined). */
	general = first_call(&g, fn);
	if (!general || reaches(&g, fn, stop_world))
		general = fn;
	for (size_t i = 0; i < g.nr && !*vaddr; i++) {
		uint64_t t = g.calls[i].target;

		if (g.calls[i].fn == general && t != general &&
		    reaches(&g, t, stop_world))
			*vaddr = t;
	}
	call_graph_free(&g);
	if (!*vaddr) {
		snprintf(why, whylen, "%s: none of GC_gcollect's calls leads to GC_stop_world as "
			 "GC_try_to_collect_inner's does", ef->path);
		return -1;
	}
	return 0;
}

/* ---- the heap's growth: GC_add_to_heap, as GC_expand_hp_inner calls it ---- */

/* GC_expand_hp_inner in a stripped libgc.so: the local call of
 * GC_expand_hp whose argument was just divided by the block size
 * (divHBLKSZ: shr $12); the lock's slow path comes first in clang's code. */
static int expand_inner_from_wrapper(struct elf_file *ef, uint64_t *vaddr, char *why,
				     size_t whylen)
{
	cs_insn *in = NULL;
	csh cs;
	size_t n = disasm_getter(ef, "GC_expand_hp", &cs, &in, why, whylen);

	*vaddr = 0;
	if (!n)
		return -1;
	for (size_t i = 0; i < n && !*vaddr; i++) {
		uint64_t to;

		if (!local_call(ef, &in[i], &to))
			continue;
		for (size_t k = i >= 3 ? i - 3 : 0; k < i; k++) {
			const cs_x86 *x = &in[k].detail->x86;

			if (in[k].id == X86_INS_SHR && x->op_count == 2 &&
			    x->operands[1].type == X86_OP_IMM && x->operands[1].imm == 12)
				*vaddr = to;
		}
	}
	cs_free(in, n);
	cs_close(&cs);
	if (!*vaddr) {
		snprintf(why, whylen, "%s defines neither GC_expand_hp_inner nor a GC_expand_hp "
			 "calling it with a count of blocks", ef->path);
		return -1;
	}
	return 0;
}

int gc_heap_grow_derive(struct elf_file *ef, uint64_t *expand_inner, uint64_t *call_site,
			char *why, size_t whylen)
{
	GElf_Addr inner, named;
	const uint8_t *code = NULL;
	size_t n = 0, len;
	cs_insn *in = NULL;
	uint64_t site = 0, to = 0;
	csh cs;

	*expand_inner = *call_site = 0;
	if (!elf_file_find_symbol(ef, "GC_expand_hp_inner", &inner, NULL) &&
	    expand_inner_from_wrapper(ef, &inner, why, whylen))
		return -1;
	/* no size known for a stripped function: its first 1 KiB, or less
	 * at the end of the section */
	for (len = 1024; len >= 64 && !(code = elf_file_bytes_at(ef, inner, len)); len /= 2)
		;
	if (!code || cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		snprintf(why, whylen, "GC_expand_hp_inner at 0x%llx in %s cannot be read",
			 (unsigned long long)inner, ef->path);
		return -1;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, code, len, inner, 0, &in);
	/* the heap section is added last, just before the success return */
	for (size_t i = 0; i < n && !cs_insn_group(cs, &in[i], X86_GRP_RET); i++) {
		uint64_t t;

		if (local_call(ef, &in[i], &t)) {
			to = t;
			site = in[i].address;
		}
	}
	cs_free(in, n);
	cs_close(&cs);
	if (!to) {
		snprintf(why, whylen, "GC_expand_hp_inner at 0x%llx in %s calls no GC_add_to_heap",
			 (unsigned long long)inner, ef->path);
		return -1;
	}
	if (elf_file_find_symbol(ef, "GC_add_to_heap", &named, NULL) && named != to) {
		snprintf(why, whylen, "GC_expand_hp_inner in %s calls 0x%llx last, not "
			 "GC_add_to_heap (0x%llx)", ef->path, (unsigned long long)to,
			 (unsigned long long)named);
		return -1;
	}
	*expand_inner = inner;
	*call_site = site;
	return 0;
}

/* An executable, not a shared library: ET_EXEC, or a PIE (it names its
 * interpreter). */
static bool is_executable(struct elf_file *ef)
{
	GElf_Phdr ph;

	return ef->ehdr.e_type == ET_EXEC || elf_file_segment(ef, PT_INTERP, &ph);
}

int gc_thread_key_derive(struct elf_file *ef, struct gc_thread_key *k, char *why,
			 size_t whylen)
{
	GElf_Addr off = 0, slot = 0;
	GElf_Xword memsz, align;
	GElf_Phdr tls;
	bool named;

	memset(k, 0, sizeof(*k));
	if (!elf_file_segment(ef, PT_TLS, &tls)) {
		snprintf(why, whylen, "%s has no thread-local storage (a libgc without "
			 "thread-local allocation)", ef->path);
		return -1;
	}
	memsz = tls.p_memsz;
	align = tls.p_align ? tls.p_align : 1;
	named = elf_file_find_tls_symbol(ef, "GC_thread_key", &off);
	if (is_executable(ef)) {
		/* The executable's block ends at the thread pointer (x86-64's
		 * variant II), placed as glibc's loader places the first one. */
		GElf_Xword first = (0 - tls.p_vaddr) & (align - 1);

		if (!named) {
			snprintf(why, whylen, "%s has no symbol GC_thread_key (stripped?)",
				 ef->path);
			return -1;
		}
		k->mode = ALYS_TLS_STATIC;
		k->tpoff = (int64_t)off -
			   (int64_t)(((memsz - first + align - 1) / align) * align + first);
		return 0;
	}
	/* A stripped libgc.so: GC_thread_key is the one word of its segment. */
	if (!named && memsz > 8) {
		snprintf(why, whylen, "%s has %lu bytes of thread-local storage and no symbol "
			 "GC_thread_key", ef->path, (unsigned long)memsz);
		return -1;
	}
	if (elf_file_count_relocs(ef, R_X86_64_DTPMOD64, &slot) != 1) {
		snprintf(why, whylen, "%s does not reach its thread-local storage through one "
			 "module id (R_X86_64_DTPMOD64)", ef->path);
		return -1;
	}
	k->mode = ALYS_TLS_DTV;
	k->modid_vaddr = slot;
	k->dtpoff = off;
	return 0;
}
