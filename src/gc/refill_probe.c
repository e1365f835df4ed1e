// SPDX-License-Identifier: MIT
#include "gc/refill_probe.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elf_file.h"
#include "lib/x86_insn.h"

#define MAX_FUNC_BYTES 4096
#define REFILL_FUNC "GC_generic_malloc_many"

/* Registers a call may change (SysV): rax, rdx, rcx, rsi, rdi, r8-r11. */
#define CALLER_SAVED ((1u << 0) | (1u << 1) | (1u << 2) | (1u << 4) | (1u << 5) | \
		      (0xfu << 8))
#define CALLEE_SAVED ((1u << 3) | (1u << 6) | (0xfu << 12))

struct func {
	struct elf_file *ef;
	csh cs;
	cs_insn *in;
	size_t n;
};

static bool is_branch(csh cs, const cs_insn *in)
{
	return cs_insn_group(cs, in, X86_GRP_JUMP);
}

static bool imm_target(const cs_insn *in, uint64_t *t)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*t = (uint64_t)x->operands[0].imm;
	return true;
}

static long index_of(const struct func *f, uint64_t addr)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->in[mid].address < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->in[lo].address == addr ? (long)lo : -1;
}

/* The slot a `jmp/call *disp(%rip)` goes through, if in is one. */
static bool rip_slot(const cs_insn *in, uint64_t *slot)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o = &x->operands[0];

	if (x->op_count != 1 || o->type != X86_OP_MEM || o->mem.base != X86_REG_RIP ||
	    o->mem.index != X86_REG_INVALID)
		return false;
	*slot = in->address + in->size + (uint64_t)o->mem.disp;
	return true;
}

static bool slot_names(struct elf_file *ef, uint64_t slot, const char *name)
{
	struct elf_reloc r;

	return elf_file_reloc_at(ef, slot, &r) &&
	       (r.type == R_X86_64_JUMP_SLOT || r.type == R_X86_64_GLOB_DAT) &&
	       !strcmp(r.sym, name);
}

/* Whether a call instruction reaches name: directly, through a PLT stub
 * (endbr64; jmp *slot) or through its GOT slot (-fno-plt). */
static bool calls(struct func *f, const cs_insn *call, const char *name, uint64_t direct)
{
	const uint8_t *code;
	const uint8_t *p;
	size_t left = 32;
	uint64_t t, slot, addr;
	cs_insn *in;
	bool ok = false;

	if (rip_slot(call, &slot))
		return slot_names(f->ef, slot, name);
	if (!imm_target(call, &t))
		return false;
	if (direct && t == direct)
		return true;
	code = elf_file_bytes_at(f->ef, t, left);
	if (!code)
		return false;
	p = code;
	addr = t;
	in = cs_malloc(f->cs);
	for (int k = 0; k < 2 && cs_disasm_iter(f->cs, &p, &left, &addr, in); k++) {
		if (in->id == X86_INS_ENDBR64)
			continue;
		ok = in->id == X86_INS_JMP && rip_slot(in, &slot) &&
		     slot_names(f->ef, slot, name);
		break;
	}
	cs_free(in, 1);
	return ok;
}

static uint16_t written_regs(const struct func *f, const cs_insn *in)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	uint16_t m = 0;

	if (in->id == X86_INS_CALL)
		m |= CALLER_SAVED;
	if (cs_regs_access(f->cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 0xffff;
	for (int i = 0; i < nwr; i++) {
		int r = x86_dwarf_regno(wr[i]);

		if (r >= 0)
			m |= 1u << r;
	}
	return m;
}

#define MAX_SLOTS 4

/* Copies of a tracked value: `mov dst, src` between registers, 64-bit
 * (full) or, where a 32-bit value is tracked, 32-bit; and 64-bit spills to
 * the stack (clang keeps GC_malloc_kind's size in a slot across the refill),
 * each slot by its offset from the stack pointer at the entry. */
struct copies {
	uint16_t full;		/* registers holding the 64-bit value */
	uint16_t low32;		/* registers whose low 32 bits hold the value */
	int32_t slot[MAX_SLOTS];	/* sorted, unused ones 0 (never a spill slot) */
};

static bool rsp_slot(const cs_x86_op *o, int32_t delta, int32_t *at)
{
	if (o->type != X86_OP_MEM || o->mem.base != X86_REG_RSP ||
	    o->mem.index != X86_REG_INVALID)
		return false;
	*at = delta + (int32_t)o->mem.disp;
	return *at < 0;
}

static bool has_slot(const struct copies *v, int32_t at)
{
	for (int i = 0; i < MAX_SLOTS; i++)
		if (v->slot[i] == at)
			return true;
	return false;
}

static void set_slot(struct copies *v, int32_t at, bool on)
{
	int32_t keep[MAX_SLOTS] = { 0 };
	int n = 0;

	for (int i = 0; i < MAX_SLOTS; i++)
		if (v->slot[i] && v->slot[i] != at)
			keep[n++] = v->slot[i];
	if (on && n < MAX_SLOTS)
		keep[n++] = at;
	/* sorted, so that equal sets compare equal */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int32_t t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	memcpy(v->slot, keep, sizeof(keep));
}

static void meet_slots(struct copies *m, const struct copies *o)
{
	for (int i = 0; i < MAX_SLOTS; i++)
		if (m->slot[i] && !has_slot(o, m->slot[i]))
			set_slot(m, m->slot[i--], false);
}

/* delta: the stack pointer's offset from its value at the entry, before
 * in (INT32_MIN: unknown, and no slot is followed). */
static void transfer(const struct func *f, const cs_insn *in, struct copies *v, int32_t delta)
{
	const cs_x86 *x = &in->detail->x86;
	uint16_t wr = written_regs(f, in);
	int32_t at;

	/* a push, or a call's return address, lands below the stack pointer */
	if (delta != INT32_MIN && (in->id == X86_INS_PUSH || in->id == X86_INS_CALL))
		set_slot(v, delta - 8, false);
	if (delta != INT32_MIN && in->id == X86_INS_MOV && x->op_count == 2) {
		/* a spill, a reload, or a store over a slot */
		if (rsp_slot(&x->operands[0], delta, &at)) {
			int r = x->operands[1].type == X86_OP_REG ?
				x86_dwarf_regno(x->operands[1].reg) : -1;

			set_slot(v, at, x->operands[0].size == 8 && r >= 0 && (v->full >> r & 1));
			return;
		}
		if (x->operands[0].type == X86_OP_REG && x->operands[0].size == 8 &&
		    rsp_slot(&x->operands[1], delta, &at) && has_slot(v, at)) {
			int d = x86_dwarf_regno(x->operands[0].reg);

			if (d >= 0) {
				v->full |= (uint16_t)(1u << d);
				v->low32 &= (uint16_t)~(1u << d);
				return;
			}
		}
	}

	if (in->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG) {
		int d = x86_dwarf_regno(x->operands[0].reg);
		int s = x86_dwarf_regno(x->operands[1].reg);
		int size = x->operands[0].size;

		if (d >= 0 && s >= 0) {
			bool full = size == 8 && (v->full >> s & 1);
			bool low = (size == 8 || size == 4) &&
				   ((v->full | v->low32) >> s & 1);

			v->full &= (uint16_t)~(1u << d);
			v->low32 &= (uint16_t)~(1u << d);
			v->full |= (uint16_t)(full << d);
			v->low32 |= (uint16_t)(low << d);
			return;
		}
	}
	v->full &= (uint16_t)~wr;
	v->low32 &= (uint16_t)~wr;
}

/* The stack pointer's offset after in, given delta before it. */
static int32_t stack_delta(const struct func *f, const cs_insn *in, int32_t delta)
{
	const cs_x86 *x = &in->detail->x86;

	if (delta == INT32_MIN)
		return delta;
	if (in->id == X86_INS_PUSH)
		return delta - 8;
	if (in->id == X86_INS_POP)
		return delta + 8;
	if ((in->id == X86_INS_SUB || in->id == X86_INS_ADD) && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && x->operands[0].reg == X86_REG_RSP &&
	    x->operands[1].type == X86_OP_IMM && x->operands[1].imm > -4096 &&
	    x->operands[1].imm < 4096)
		return delta + (int32_t)(in->id == X86_INS_SUB ? -x->operands[1].imm :
					 x->operands[1].imm);
	if (in->id != X86_INS_CALL && (written_regs(f, in) & (1u << 7)))
		return INT32_MIN;
	return delta;
}

/*
 * Where the function's arguments rdi (64-bit) and esi (32-bit) are found
 * at instruction `at`, on every path from the entry: a forward must
 * analysis (intersection where paths meet). A jump out of the function
 * (a tail call, direct or not) ends a path.
 */
static void args_at(struct func *f, size_t at, struct copies *lb, struct copies *kind,
		    int32_t *delta)
{
	struct state { struct copies lb, kind; int32_t delta; bool seen; } *st;
	size_t *work, nwork = 0;

	st = calloc(f->n, sizeof(*st));
	work = calloc(f->n * 2 + 2, sizeof(*work));
	memset(lb, 0, sizeof(*lb));
	memset(kind, 0, sizeof(*kind));
	*delta = INT32_MIN;
	if (!st || !work)
		goto out;
	st[0].seen = true;
	st[0].lb.full = 1u << 5;	/* rdi */
	st[0].kind.low32 = 1u << 4;	/* esi */
	work[nwork++] = 0;
	while (nwork) {
		size_t i = work[--nwork], next[2];
		int nnext = 0;
		const cs_insn *in = &f->in[i];
		struct state out = st[i];
		uint64_t t;

		transfer(f, in, &out.lb, out.delta);
		transfer(f, in, &out.kind, out.delta);
		out.delta = stack_delta(f, in, out.delta);
		if (cs_insn_group(f->cs, in, X86_GRP_RET))
			continue;
		if (is_branch(f->cs, in)) {
			long j = imm_target(in, &t) ? index_of(f, t) : -1;

			if (j >= 0)
				next[nnext++] = (size_t)j;
			if (in->id == X86_INS_JMP)
				goto edges;
		}
		if (i + 1 < f->n)
			next[nnext++] = i + 1;
edges:
		for (int k = 0; k < nnext; k++) {
			struct state *s = &st[next[k]];
			struct state m = out;

			if (s->seen) {
				m.lb.full &= s->lb.full;
				m.lb.low32 &= s->lb.low32;
				m.kind.full &= s->kind.full;
				m.kind.low32 &= s->kind.low32;
				meet_slots(&m.lb, &s->lb);
				meet_slots(&m.kind, &s->kind);
				if (m.delta != s->delta) {
					m.delta = INT32_MIN;
					memset(m.lb.slot, 0, sizeof(m.lb.slot));
					memset(m.kind.slot, 0, sizeof(m.kind.slot));
				}
				if (!memcmp(&m, s, sizeof(m)))
					continue;
			}
			*s = m;
			s->seen = true;
			if (nwork < f->n * 2 + 2)
				work[nwork++] = next[k];
		}
	}
	if (st[at].seen) {
		*lb = st[at].lb;
		*kind = st[at].kind;
		*delta = st[at].delta;
	}
out:
	free(st);
	free(work);
}

static int lowest(uint16_t m)
{
	return m ? __builtin_ctz(m) : -1;
}

static bool is_target_in(struct func *f, uint64_t lo, uint64_t hi)
{
	uint64_t t;

	for (size_t i = 0; i < f->n; i++)
		if (is_branch(f->cs, &f->in[i]) && imm_target(&f->in[i], &t) &&
		    t > lo && t <= hi)
			return true;
	return false;
}

/* The callee-saved register copied to rdx (the list's address) on the
 * straight line before the call, not written again until the probe. */
static int list_reg(struct func *f, size_t call, size_t probe)
{
	for (size_t j = call; j-- > 0;) {
		const cs_insn *in = &f->in[j];
		const cs_x86 *x = &in->detail->x86;
		uint16_t wr = written_regs(f, in);
		int src;

		if (is_target_in(f, in->address, f->in[call].address) ||
		    is_branch(f->cs, in) || in->id == X86_INS_CALL)
			return -1;
		if (!(wr & (1u << 1)))
			continue;
		if (in->id != X86_INS_MOV || x->op_count != 2 || x->operands[1].type != X86_OP_REG ||
		    x->operands[0].size != 8)
			return -1;
		src = x86_dwarf_regno(x->operands[1].reg);
		if (src < 0 || !(CALLEE_SAVED & (1u << src)))
			return -1;
		for (size_t k = j + 1; k < probe; k++)
			if (k != call && (written_regs(f, &f->in[k]) & (1u << src)))
				return -1;
		return src;
	}
	return -1;
}

static int analyse(struct func *f, struct refill_probe *rp, char *why, size_t whylen)
{
	GElf_Addr many = 0;
	long call = -1;
	size_t probe;
	struct copies lb, kind;
	int32_t delta;

	elf_file_find_symbol(f->ef, REFILL_FUNC, &many, NULL);
	for (size_t i = 0; i < f->n; i++) {
		if (f->in[i].id != X86_INS_CALL || !calls(f, &f->in[i], REFILL_FUNC, many))
			continue;
		if (call >= 0) {
			snprintf(why, whylen, "GC_malloc_kind calls " REFILL_FUNC " twice");
			return -1;
		}
		call = (long)i;
	}
	if (call < 0) {
		snprintf(why, whylen, "GC_malloc_kind has no call to " REFILL_FUNC
			 " (libgc built without thread-local allocation?)");
		return -1;
	}
	/* The first emulated instruction of the straight line after it. */
	for (probe = (size_t)call + 1; probe < f->n; probe++) {
		const cs_insn *in = &f->in[probe];

		if (is_target_in(f, f->in[call].address, in->address) ||
		    cs_insn_group(f->cs, in, X86_GRP_RET)) {
			probe = f->n;
			break;
		}
		if (x86_kernel_emulates(f->cs, in))
			break;
	}
	if (probe >= f->n) {
		snprintf(why, whylen, "no instruction to probe after GC_malloc_kind's refill");
		return -1;
	}
	rp->fl_reg = list_reg(f, (size_t)call, probe);
	if (rp->fl_reg < 0) {
		snprintf(why, whylen, "GC_malloc_kind's free-list address is kept in no "
			 "register across the refill");
		return -1;
	}
	args_at(f, probe, &lb, &kind, &delta);
	rp->size_reg = lowest(lb.full);
	rp->kind_reg = lowest(kind.full | kind.low32);
	if (rp->size_reg < 0 && lb.slot[0] && delta != INT32_MIN)
		rp->size_sp_off = lb.slot[0] - delta;
	if (rp->size_reg < 0 && rp->size_sp_off < 0) {
		snprintf(why, whylen, "GC_malloc_kind's size argument is kept in no register "
			 "and no stack slot across the refill");
		return -1;
	}
	rp->call_vaddr = f->in[call].address;
	rp->probe_vaddr = f->in[probe].address;
	snprintf(rp->insn, sizeof(rp->insn), "%s %s", f->in[probe].mnemonic,
		 f->in[probe].op_str);
	if (!elf_file_vaddr_to_offset(f->ef, rp->probe_vaddr, &rp->probe_file_off)) {
		snprintf(why, whylen, "no segment maps GC_malloc_kind");
		return -1;
	}
	return 0;
}

int refill_probe_derive(struct elf_file *ef, struct refill_probe *rp, char *why,
			size_t whylen)
{
	struct func f = { .ef = ef };
	GElf_Addr vaddr;
	GElf_Xword size = 0;
	const uint8_t *code;
	int ret = -1;

	memset(rp, 0, sizeof(*rp));
	rp->fl_reg = rp->size_reg = rp->kind_reg = rp->size_sp_off = -1;
	if (!elf_file_find_symbol(ef, "GC_malloc_kind", &vaddr, &size) || !size) {
		snprintf(why, whylen, "%s does not define GC_malloc_kind (libgc before 7.6?)",
			 ef->path);
		return -1;
	}
	if (size > MAX_FUNC_BYTES || !(code = elf_file_bytes_at(ef, vaddr, size))) {
		snprintf(why, whylen, "%s: GC_malloc_kind cannot be read", ef->path);
		return -1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &f.cs) != CS_ERR_OK) {
		snprintf(why, whylen, "capstone cannot be opened");
		return -1;
	}
	cs_option(f.cs, CS_OPT_DETAIL, CS_OPT_ON);
	f.n = cs_disasm(f.cs, code, size, vaddr, 0, &f.in);
	if (!f.n)
		snprintf(why, whylen, "%s: GC_malloc_kind cannot be disassembled", ef->path);
	else
		ret = analyse(&f, rp, why, whylen);
	if (!ret)
		rp->func_vaddr = vaddr;
	if (f.n)
		cs_free(f.in, f.n);
	cs_close(&f.cs);
	return ret;
}
