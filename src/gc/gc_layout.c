// SPDX-License-Identifier: MIT
/*
 * Reads the collector's header layout out of its own code. GC_is_marked(p)
 * is HDR(p) followed by one mark-byte load; GC_size(p) is HDR(p)->hb_sz;
 * GC_base tests HBLK_IS_FREE(hdr). In Debian's libgc.so the header lookup
 * is inlined, in a static libgc.a it is a call to GC_find_header: direct
 * calls are followed one level. What is recognised, in any register:
 *
 *   R = &GC_arrays       lea GC_arrays(%rip), or a load from its GOT slot
 *   top_index_off        a load from disp(R, idx, 8)
 *   bi_key_off           the first cmp with disp(reg), reg != R
 *   bi_link_off          mov disp(reg), reg  (following hash_link)
 *   hb_marks_off         the byte load disp(hdr, granule, 1)
 *   hi_shift, log_hblk, granule_shift, the masks: shr and and immediates
 *   hb_sz_off            GC_size's last load before ret
 *   hb_flags_off         GC_base's  testb $FREE_BLK, disp(hdr)
 */
#include "gc_layout.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <string.h>

#include "elf_file.h"
#include "x86_insn.h"

#define MAX_INSNS 160

/* What one walk over a function (and the functions it calls) found. */
struct scan {
	struct elf_file *ef;
	csh cs;
	uint64_t arrays;
	x86_reg arrays_regs[4];
	int n_arrays_regs;
	int64_t top_off, key_off, link_off, marks_off, last_load_off;
	int64_t flags_off, flags_bit;
	bool seen_ret;		/* the function's own first ret */
	uint8_t shr[8];
	int n_shr;
	uint64_t masks[8];
	int n_masks;
};

static bool is_arrays_reg(const struct scan *s, x86_reg r)
{
	for (int i = 0; i < s->n_arrays_regs; i++)
		if (s->arrays_regs[i] == x86_reg64(r))
			return true;
	return false;
}

static void set_arrays_reg(struct scan *s, x86_reg r, bool on)
{
	r = x86_reg64(r);
	for (int i = 0; i < s->n_arrays_regs; i++) {
		if (s->arrays_regs[i] == r) {
			if (!on)
				s->arrays_regs[i] = s->arrays_regs[--s->n_arrays_regs];
			return;
		}
	}
	if (on && s->n_arrays_regs < 4)
		s->arrays_regs[s->n_arrays_regs++] = r;
}

static void scan_insn(struct scan *s, const cs_insn *in, int depth)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	bool sets_arrays = false;

	/* R = &GC_arrays */
	if (x->op_count == 2 && o0->type == X86_OP_REG && o1->type == X86_OP_MEM &&
	    o1->mem.base == X86_REG_RIP && o1->mem.index == X86_REG_INVALID) {
		uint64_t target = in->address + in->size + (uint64_t)o1->mem.disp, slot;

		/* lea GC_arrays(%rip), or a load from a GOT slot holding it */
		if ((in->id == X86_INS_LEA && target == s->arrays) ||
		    (in->id == X86_INS_MOV && o1->size == 8 &&
		     elf_file_slot_value(s->ef, target, &slot) && slot == s->arrays))
			sets_arrays = true;
	}
	if (x->op_count == 2 && o1->type == X86_OP_MEM && o1->mem.base != X86_REG_RIP) {
		const x86_op_mem *m = &o1->mem;

		if (in->id == X86_INS_MOV && m->index != X86_REG_INVALID && m->scale == 8 &&
		    is_arrays_reg(s, m->base) && s->top_off < 0)
			s->top_off = m->disp;
		if (in->id == X86_INS_MOV && m->index == X86_REG_INVALID && o0->type == X86_OP_REG &&
		    x86_reg64(o0->reg) == x86_reg64(m->base) && !is_arrays_reg(s, m->base) &&
		    s->key_off >= 0 && m->disp != s->key_off && s->link_off < 0)
			s->link_off = m->disp;
		if ((in->id == X86_INS_MOVSX || in->id == X86_INS_MOVZX) && o1->size == 1 &&
		    m->index != X86_REG_INVALID && m->scale == 1 && s->marks_off < 0)
			s->marks_off = m->disp;
		if (in->id == X86_INS_MOV && m->index == X86_REG_INVALID && o1->size == 8 &&
		    !is_arrays_reg(s, m->base) && !s->seen_ret)
			s->last_load_off = m->disp;
	}
	if (in->id == X86_INS_CMP && x->op_count == 2 && s->key_off < 0) {
		const cs_x86_op *mo = o0->type == X86_OP_MEM ? o0 : o1->type == X86_OP_MEM ? o1 : NULL;

		if (mo && mo->mem.base != X86_REG_RIP && mo->mem.index == X86_REG_INVALID &&
		    !is_arrays_reg(s, mo->mem.base))
			s->key_off = mo->mem.disp;
	}
	if (in->id == X86_INS_TEST && x->op_count == 2 && o0->type == X86_OP_MEM &&
	    o0->size == 1 && o1->type == X86_OP_IMM && s->flags_off < 0 && depth == 0) {
		s->flags_off = o0->mem.disp;
		s->flags_bit = o1->imm;
	}
	if (in->id == X86_INS_SHR && x->op_count == 2 && o1->type == X86_OP_IMM &&
	    s->n_shr < 8)
		s->shr[s->n_shr++] = (uint8_t)o1->imm;
	if (in->id == X86_INS_AND && x->op_count == 2 && o1->type == X86_OP_IMM &&
	    o1->imm > 0 && ((uint64_t)o1->imm & ((uint64_t)o1->imm + 1)) == 0 && s->n_masks < 8)
		s->masks[s->n_masks++] = (uint64_t)o1->imm;

	if (cs_regs_access(s->cs, in, rd, &nrd, wr, &nwr) == CS_ERR_OK)
		for (int i = 0; i < nwr; i++)
			set_arrays_reg(s, wr[i], false);
	if (sets_arrays)
		set_arrays_reg(s, o0->reg, true);
}

/* Walks len bytes of code at vaddr (a called function: until its ret),
 * entering direct calls one level deep. */
static int scan_code(struct scan *s, uint64_t vaddr, size_t len, int depth)
{
	const uint8_t *code;
	cs_insn *insns;
	size_t n;

	if (!len)
		len = 256;
	code = elf_file_bytes_at(s->ef, vaddr, len);
	if (!code)
		return -1;
	n = cs_disasm(s->cs, code, len, vaddr, MAX_INSNS, &insns);
	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const cs_insn *in = &insns[i];
		const cs_x86 *x = &in->detail->x86;

		if (in->id == X86_INS_CALL && x->op_count == 1 &&
		    x->operands[0].type == X86_OP_IMM && depth == 0) {
			scan_code(s, (uint64_t)x->operands[0].imm, 0, depth + 1);
			continue;
		}
		scan_insn(s, in, depth);
		if (in->id == X86_INS_RET) {
			if (depth > 0)
				break;
			s->seen_ret = true;
		}
	}
	cs_free(insns, n);
	return 0;
}

static int scan_function(struct elf_file *ef, csh cs, const char *name, uint64_t arrays,
			 struct scan *s, char *why, size_t whylen)
{
	GElf_Addr vaddr;
	GElf_Xword size = 0;

	memset(s, 0, sizeof(*s));
	s->ef = ef;
	s->cs = cs;
	s->arrays = arrays;
	s->top_off = s->key_off = s->link_off = s->marks_off = s->last_load_off = -1;
	s->flags_off = s->flags_bit = -1;
	if (!elf_file_find_symbol(ef, name, &vaddr, &size)) {
		snprintf(why, whylen, "%s does not export %s", ef->path, name);
		return -1;
	}
	if (scan_code(s, vaddr, size && size < 1024 ? size : 512, 0)) {
		snprintf(why, whylen, "cannot disassemble %s in %s", name, ef->path);
		return -1;
	}
	return 0;
}

static bool has_shift(const struct scan *s, uint8_t v)
{
	for (int i = 0; i < s->n_shr; i++)
		if (s->shr[i] == v)
			return true;
	return false;
}

static bool has_mask(const struct scan *s, uint64_t v)
{
	for (int i = 0; i < s->n_masks; i++)
		if (s->masks[i] == v)
			return true;
	return false;
}

int gc_layout_derive(struct elf_file *ef, struct gc_layout *l, char *why, size_t whylen)
{
	struct scan m, sz, base;
	GElf_Addr arrays;
	GElf_Xword arrays_size = 0;
	csh cs;
	int ret = -1;

	memset(l, 0, sizeof(*l));
	if (!elf_file_find_symbol(ef, "GC_arrays", &arrays, &arrays_size)) {
		snprintf(why, whylen, "%s does not export GC_arrays", ef->path);
		return -1;
	}
	l->arrays_size = arrays_size;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return snprintf(why, whylen, "capstone cannot be initialised"), -1;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (scan_function(ef, cs, "GC_is_marked", arrays, &m, why, whylen) ||
	    scan_function(ef, cs, "GC_size", arrays, &sz, why, whylen) ||
	    scan_function(ef, cs, "GC_base", arrays, &base, why, whylen))
		goto out;
	if (m.top_off < 0 || m.key_off < 0 || m.link_off < 0 || m.marks_off < 0) {
		snprintf(why, whylen, "GC_is_marked in %s does not look like Boehm GC 7/8 "
			 "(top index %lld, key %lld, hash link %lld, marks %lld)", ef->path,
			 (long long)m.top_off, (long long)m.key_off, (long long)m.link_off,
			 (long long)m.marks_off);
		goto out;
	}
	/* The biggest shift selects the top index, the next the block. */
	for (int i = 0; i < m.n_shr; i++) {
		if (m.shr[i] > l->hi_shift)
			l->hi_shift = m.shr[i];
	}
	for (int i = 0; i < m.n_shr; i++) {
		if (m.shr[i] < l->hi_shift && m.shr[i] > l->log_hblk && m.shr[i] >= 9)
			l->log_hblk = m.shr[i];
	}
	l->granule_shift = 64;
	for (int i = 0; i < m.n_shr; i++) {
		if (m.shr[i] < l->granule_shift)
			l->granule_shift = m.shr[i];
	}
	l->bottom_mask = l->hi_shift > l->log_hblk ? (1u << (l->hi_shift - l->log_hblk)) - 1 : 0;
	for (int i = 0; i < m.n_masks; i++) {
		if (m.masks[i] != l->bottom_mask && m.masks[i] < (1u << 24) &&
		    m.masks[i] > l->top_mask)
			l->top_mask = (uint32_t)m.masks[i];
	}
	if (!l->log_hblk || !l->top_mask || !has_mask(&m, l->bottom_mask) ||
	    !has_shift(&m, l->log_hblk) || l->granule_shift < 3 || l->granule_shift > 5) {
		snprintf(why, whylen, "GC_is_marked in %s: unexpected shifts or masks "
			 "(top shift %u, block shift %u, granule shift %u)", ef->path,
			 l->hi_shift, l->log_hblk, l->granule_shift);
		goto out;
	}
	if (sz.last_load_off < 0) {
		snprintf(why, whylen, "GC_size in %s does not load hb_sz", ef->path);
		goto out;
	}
	if (base.flags_off < 0 || base.flags_bit <= 0 || base.flags_bit > 0x80) {
		snprintf(why, whylen, "GC_base in %s does not test HBLK_IS_FREE", ef->path);
		goto out;
	}
	l->arrays_vaddr = arrays;
	l->top_index_off = (uint32_t)m.top_off;
	l->bi_key_off = (uint32_t)m.key_off;
	l->bi_link_off = (uint32_t)m.link_off;
	l->hb_marks_off = (uint32_t)m.marks_off;
	l->hb_sz_off = (uint32_t)sz.last_load_off;
	l->hb_flags_off = (uint32_t)base.flags_off;
	l->free_blk = (uint32_t)base.flags_bit;
	if (arrays_size && (uint64_t)l->top_index_off + ((uint64_t)l->top_mask + 1) * 8 > arrays_size) {
		snprintf(why, whylen, "%s: top index at GC_arrays+0x%x with %u entries does not fit "
			 "in GC_arrays (%lu bytes)", ef->path, l->top_index_off, l->top_mask + 1,
			 (unsigned long)arrays_size);
		goto out;
	}
	ret = 0;
out:
	cs_close(&cs);
	return ret;
}

void gc_layout_describe(const struct gc_layout *l, char *buf, size_t len)
{
	snprintf(buf, len, "GC_arrays 0x%lx, top_index +0x%x (%u entries, p>>%u), "
		 "bottom index key +0x%x hash_link +0x%x (%u entries, p>>%u), "
		 "header hb_sz +0x%x hb_flags +0x%x (free 0x%x) hb_marks +0x%x "
		 "(one byte per %u-byte granule)",
		 (unsigned long)l->arrays_vaddr, l->top_index_off, l->top_mask + 1, l->hi_shift,
		 l->bi_key_off, l->bi_link_off, l->bottom_mask + 1, l->log_hblk, l->hb_sz_off,
		 l->hb_flags_off, l->free_blk, l->hb_marks_off, 1u << l->granule_shift);
}
