// SPDX-License-Identifier: MIT
/*
 * Reads the collector's header layout out of its own code. GC_is_marked(p)
 * is HDR(p) followed by one mark-byte load; GC_size(p) is HDR(p)->hb_sz;
 * GC_base tests HBLK_IS_FREE(hdr). Compilers write HDR(p) differently (gcc:
 * `mov top(R,idx,8)` with idx = (p >> 22) & 0x7ff; clang: idx pre-scaled,
 * `(p >> 19) & 0x3ff8`, then lea and add; inlined in Debian's libgc.so, a
 * call to GC_find_header in a static libgc.a), so the code is evaluated
 * symbolically rather than matched against instruction shapes: every
 * register holds what it is known to be in terms of p and of the
 * collector's structures, and the loads say which field is which:
 *
 *   GC_arrays + top + ((p >> hi_shift) & top_mask) * 8   a bottom index (BI)
 *   cmp BI + key / BI + link (loaded, or its address taken)
 *   BI + ((p >> log_hblk) & bottom_mask) * 8              a header (HDR)
 *   byte HDR + marks + ((p >> granule_shift) & m)         the mark byte
 *   HDR + hb_sz (GC_size's last load), testb HDR + flags (GC_base)
 *
 * The code is read in address order (branches not followed, direct calls
 * entered one level): the header lookup is straight-line but for the hash
 * chain's loop, whose values the order-independent rules above accept.
 */
#include "gc/gc_layout.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <string.h>

#include "lib/elf_file.h"
#include "lib/x86_insn.h"

#define MAX_INSNS 160
#define NREGS 16

/* What a value is: unknown, a constant, p-derived, or an address in one of
 * the collector's structures (off bytes in, plus an optional index). */
enum sv_base { SV_UNKNOWN, SV_CONST, SV_P, SV_ARR, SV_BI, SV_HDR };

/* ((p >> s) & m) << k; known is false for an index not derived from p. */
struct sv_idx {
	bool on, known;
	uint8_t s, k;
	uint64_t m;
};

struct sv {
	uint8_t base;
	int64_t off;		/* SV_CONST: the value */
	struct sv_idx ix;	/* SV_P: the value itself (plus off) */
};

/* One field of the header lookup as the code addresses it. */
struct field {
	bool seen;
	int64_t off;
	struct sv_idx ix;
};

struct scan {
	struct elf_file *ef;
	csh cs;
	uint64_t arrays, arrays_size;
	struct sv r[NREGS];
	struct field top, bottom, marks, key, link, flags, last_load;
	int64_t flags_bit;
	bool seen_ret;		/* the function's own first ret */
};

static const struct sv unknown = { .base = SV_UNKNOWN };

static struct sv sv_const(int64_t c)
{
	return (struct sv){ .base = SV_CONST, .off = c };
}

static bool is_ptr(const struct sv *v)
{
	return v->base == SV_ARR || v->base == SV_BI || v->base == SV_HDR;
}

static bool pure_p(const struct sv *v)
{
	return v->base == SV_P && v->off == 0 && v->ix.known;
}

/* Moves the mask's trailing zeros into the shifts: (p >> 19) & 0x3ff8 is
 * ((p >> 22) & 0x7ff) << 3. */
static struct sv p_norm(struct sv v)
{
	if (!v.ix.m)
		return sv_const(0);
	while (!(v.ix.m & 1) && v.ix.s < 63) {
		v.ix.m >>= 1;
		v.ix.s++;
		v.ix.k++;
	}
	return v;
}

static uint64_t low_bits(unsigned n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static struct sv sv_trunc(struct sv v, unsigned bits)
{
	if (bits >= 64)
		return v;
	if (v.base == SV_CONST)
		return sv_const((int64_t)((uint64_t)v.off & low_bits(bits)));
	if (!pure_p(&v))
		return unknown;
	if (v.ix.k >= bits)
		return sv_const(0);
	v.ix.m &= low_bits(bits - v.ix.k);
	return p_norm(v);
}

static struct sv sv_shr(struct sv v, unsigned t)
{
	if (v.base == SV_CONST)
		return sv_const((int64_t)((uint64_t)v.off >> (t & 63)));
	if (!pure_p(&v))
		return unknown;
	if (v.ix.k >= t) {
		v.ix.k -= t;
	} else {
		t -= v.ix.k;
		v.ix.k = 0;
		if (v.ix.s + t > 63)
			return sv_const(0);
		v.ix.s += t;
		v.ix.m >>= t;
	}
	return p_norm(v);
}

static struct sv sv_shl(struct sv v, unsigned t)
{
	if (v.base == SV_CONST)
		return sv_const((int64_t)((uint64_t)v.off << (t & 63)));
	if (!pure_p(&v) || v.ix.k + t > 63)
		return unknown;
	v.ix.k += t;
	return v;
}

static struct sv sv_and(struct sv v, uint64_t imm)
{
	if (v.base == SV_CONST)
		return sv_const((int64_t)((uint64_t)v.off & imm));
	if (!pure_p(&v))
		return unknown;
	v.ix.m &= imm >> v.ix.k;
	return p_norm(v);
}

static struct sv sv_add(struct sv a, struct sv b)
{
	if (b.base == SV_CONST && a.base != SV_UNKNOWN) {
		a.off += b.off;
		return a;
	}
	if (a.base == SV_CONST && b.base != SV_UNKNOWN)
		return sv_add(b, a);
	if (is_ptr(&b) && !is_ptr(&a))
		return sv_add(b, a);
	/* a structure plus an index: p-derived, or from elsewhere */
	if (is_ptr(&a) && !a.ix.on && (b.base == SV_P || b.base == SV_UNKNOWN)) {
		a.ix = b.base == SV_P && b.off == 0 ? b.ix : (struct sv_idx){ .on = true };
		a.ix.on = true;
		a.off += b.base == SV_P ? b.off : 0;
		return a;
	}
	return unknown;
}

static struct sv sv_sub(struct sv a, struct sv b)
{
	if (b.base == SV_CONST && a.base != SV_UNKNOWN) {
		a.off -= b.off;
		return a;
	}
	/* p - (p & ~M) is p & M (both masks in place: s == k) */
	if (pure_p(&a) && pure_p(&b) && a.ix.s == a.ix.k && b.ix.s == b.ix.k) {
		uint64_t ma = a.ix.m << a.ix.s, mb = b.ix.m << b.ix.s;

		if (!(mb & ~ma)) {
			a.ix.s = a.ix.k = 0;
			a.ix.m = ma & ~mb;
			return p_norm(a);
		}
	}
	return unknown;
}

/* A constant inside GC_arrays is a place in it. */
static struct sv as_arrays(const struct scan *s, struct sv v)
{
	uint64_t c = (uint64_t)v.off;

	if (v.base == SV_CONST && c >= s->arrays &&
	    c < s->arrays + (s->arrays_size ? s->arrays_size : 1)) {
		v.base = SV_ARR;
		v.off = (int64_t)(c - s->arrays);
	}
	return v;
}

static struct sv reg_get(const struct scan *s, x86_reg r, unsigned size)
{
	int n = x86_dwarf_regno(r);

	if (n < 0 || n >= NREGS)
		return unknown;
	if (r == X86_REG_AH || r == X86_REG_BH || r == X86_REG_CH || r == X86_REG_DH)
		return unknown;
	return sv_trunc(s->r[n], size * 8);
}

/* Writes v to the register: a 32-bit write zero-extends, a narrower one
 * keeps the rest, which is then unknown. */
static void reg_set(struct scan *s, x86_reg r, unsigned size, struct sv v)
{
	int n = x86_dwarf_regno(r);

	if (n < 0 || n >= NREGS)
		return;
	s->r[n] = size >= 8 ? v : size == 4 ? sv_trunc(v, 32) : unknown;
}

static struct sv mem_addr(const struct scan *s, const cs_insn *in, const x86_op_mem *m)
{
	struct sv a, i;

	if (m->base == X86_REG_RIP)
		return as_arrays(s, sv_const((int64_t)(in->address + in->size) + m->disp));
	a = m->base == X86_REG_INVALID ? sv_const(0) : reg_get(s, m->base, 8);
	if (m->index != X86_REG_INVALID) {
		i = reg_get(s, m->index, 8);
		if (m->scale > 1)
			i = sv_shl(i, (unsigned)__builtin_ctz((unsigned)m->scale));
		a = sv_add(a, i);
	}
	return sv_add(a, sv_const(m->disp));
}

static void note(struct field *f, const struct sv *a)
{
	if (f->seen)
		return;
	f->seen = true;
	f->off = a->off;
	f->ix = a->ix;
}

/* What an 8-byte load from a yields, noting which field it read. */
static struct sv load(struct scan *s, struct sv a, bool at_top)
{
	struct sv v = { .base = SV_UNKNOWN };

	switch (a.base) {
	case SV_ARR:
		/* the top index (or GC_all_nils, read where the chain ends) */
		if (a.ix.on && a.ix.known)
			note(&s->top, &a);
		v.base = SV_BI;
		break;
	case SV_BI:
		if (a.ix.on) {
			if (a.ix.known)
				note(&s->bottom, &a);
			v.base = SV_HDR;
		} else {
			if (s->key.seen && a.off != s->key.off)
				note(&s->link, &a);
			v.base = SV_BI;
		}
		break;
	case SV_HDR:
		if (!a.ix.on && at_top && !s->seen_ret) {
			s->last_load.seen = true;
			s->last_load.off = a.off;
		}
		break;
	default:
		break;
	}
	return v;
}

static void scan_insn(struct scan *s, const cs_insn *in, int depth)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	bool two = x->op_count == 2, dst_reg = x->op_count >= 1 && o0->type == X86_OP_REG;
	struct sv v = unknown, a;
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	/* comparisons and tests write no register */
	if (in->id == X86_INS_CMP && two) {
		const cs_x86_op *mo = o0->type == X86_OP_MEM ? o0 : o1->type == X86_OP_MEM ? o1 : NULL;

		if (mo) {
			a = mem_addr(s, in, &mo->mem);
			if (a.base == SV_BI && !a.ix.on)
				note(&s->key, &a);
		}
		return;
	}
	if (in->id == X86_INS_TEST && two && o0->type == X86_OP_MEM && o0->size == 1 &&
	    o1->type == X86_OP_IMM) {
		a = mem_addr(s, in, &o0->mem);
		if (a.base == SV_HDR && !a.ix.on && !s->flags.seen) {
			note(&s->flags, &a);
			s->flags_bit = o1->imm;
		}
		return;
	}
	if (dst_reg && two) {
		unsigned sz = o0->size;

		switch (in->id) {
		case X86_INS_MOV:
			if (o1->type == X86_OP_REG) {
				reg_set(s, o0->reg, sz, reg_get(s, o1->reg, sz));
			} else if (o1->type == X86_OP_IMM) {
				reg_set(s, o0->reg, sz, sv_const(o1->imm));
			} else if (o1->type == X86_OP_MEM && sz == 8) {
				uint64_t slot;

				a = mem_addr(s, in, &o1->mem);
				/* &GC_arrays from its GOT slot */
				if (o1->mem.base == X86_REG_RIP && a.base == SV_CONST &&
				    elf_file_slot_value(s->ef, (uint64_t)a.off, &slot) &&
				    slot == s->arrays)
					v = (struct sv){ .base = SV_ARR };
				else
					v = load(s, a, depth == 0);
				reg_set(s, o0->reg, sz, v);
			} else {
				reg_set(s, o0->reg, sz, unknown);
			}
			return;
		case X86_INS_MOVZX:
		case X86_INS_MOVSX:
			if (o1->type == X86_OP_MEM && o1->size == 1) {
				a = mem_addr(s, in, &o1->mem);
				if (a.base == SV_HDR && a.ix.on && a.ix.known)
					note(&s->marks, &a);
			} else if (o1->type == X86_OP_REG && in->id == X86_INS_MOVZX) {
				v = reg_get(s, o1->reg, o1->size);
			}
			reg_set(s, o0->reg, sz, v);
			return;
		case X86_INS_LEA:
			a = mem_addr(s, in, &o1->mem);
			if (a.base == SV_BI && !a.ix.on && s->key.seen && a.off != s->key.off)
				note(&s->link, &a);
			reg_set(s, o0->reg, sz, a);
			return;
		case X86_INS_ADD:
		case X86_INS_SUB:
		case X86_INS_AND:
		case X86_INS_SHR:
		case X86_INS_SHL:
		case X86_INS_XOR: {
			struct sv d = reg_get(s, o0->reg, sz), b = unknown;

			if (o1->type == X86_OP_IMM)
				b = sv_const(o1->imm);
			else if (o1->type == X86_OP_REG)
				b = reg_get(s, o1->reg, sz);
			if (in->id == X86_INS_ADD)
				v = sv_add(d, b);
			else if (in->id == X86_INS_SUB)
				v = sv_sub(d, b);
			else if (in->id == X86_INS_XOR)
				v = o1->type == X86_OP_REG && x86_reg64(o1->reg) == x86_reg64(o0->reg) ?
				    sv_const(0) : unknown;
			else if (b.base != SV_CONST)
				v = unknown;
			else if (in->id == X86_INS_AND)
				v = sv_and(d, (uint64_t)b.off & low_bits(sz * 8));
			else if (in->id == X86_INS_SHR)
				v = sv_shr(d, (unsigned)b.off & 63);
			else
				v = sv_shl(d, (unsigned)b.off & 63);
			reg_set(s, o0->reg, sz, v);
			return;
		}
		default:
			break;
		}
	}
	if (cs_regs_access(s->cs, in, rd, &nrd, wr, &nwr) == CS_ERR_OK) {
		for (int i = 0; i < nwr; i++) {
			int n = x86_dwarf_regno(wr[i]);

			if (n >= 0 && n < NREGS)
				s->r[n] = unknown;
		}
	}
}

/* Walks len bytes of code at vaddr (a called function: until its ret),
 * entering direct calls one level deep with the registers as they are. */
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

		if (in->id == X86_INS_CALL) {
			if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM && depth == 0 &&
			    !scan_code(s, (uint64_t)x->operands[0].imm, 0, depth + 1))
				continue;
			/* what a call may change (SysV) */
			static const int clobbered[] = { 0, 1, 2, 4, 5, 8, 9, 10, 11 };
			for (size_t k = 0; k < sizeof(clobbered) / sizeof(clobbered[0]); k++)
				s->r[clobbered[k]] = unknown;
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
			 uint64_t arrays_size, struct scan *s, char *why, size_t whylen)
{
	GElf_Addr vaddr;
	GElf_Xword size = 0;

	memset(s, 0, sizeof(*s));
	s->ef = ef;
	s->cs = cs;
	s->arrays = arrays;
	s->arrays_size = arrays_size;
	s->flags_bit = -1;
	/* p, the argument */
	s->r[5] = (struct sv){ .base = SV_P, .ix = { .on = true, .known = true, .m = ~0ull } };
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

static long long seen_off(const struct field *f)
{
	return f->seen ? (long long)f->off : -1;
}

/* The build's version, for -v and bug reports: GC_version where exported
 * (static builds), else GC_get_version's `mov $VERSION,%eax; ret`. */
static uint32_t gc_version_of(struct elf_file *ef)
{
	GElf_Addr v;
	GElf_Xword size;
	const uint8_t *p;
	uint32_t version = 0;

	if (elf_file_find_symbol(ef, "GC_version", &v, &size) && size == 4 &&
	    (p = elf_file_bytes_at(ef, v, 4))) {
		memcpy(&version, p, 4);
	} else if (elf_file_find_symbol(ef, "GC_get_version", &v, &size) &&
		   (p = elf_file_bytes_at(ef, v, 10))) {
		if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
			p += 4;	/* endbr64 */
		if (p[0] == 0xb8 && p[5] == 0xc3)
			memcpy(&version, p + 1, 4);
	}
	return version < (1u << 24) ? version : 0;
}

int gc_layout_derive(struct elf_file *ef, struct gc_layout *l, char *why, size_t whylen)
{
	struct scan m, sz, base;
	GElf_Addr arrays;
	GElf_Xword arrays_size = 0;
	unsigned bottom_bits;
	csh cs;
	int ret = -1;

	memset(l, 0, sizeof(*l));
	if (!elf_file_find_symbol(ef, "GC_arrays", &arrays, &arrays_size)) {
		snprintf(why, whylen, "%s does not export GC_arrays", ef->path);
		return -1;
	}
	l->arrays_size = arrays_size;
	l->version = gc_version_of(ef);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return snprintf(why, whylen, "capstone cannot be initialised"), -1;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (scan_function(ef, cs, "GC_is_marked", arrays, arrays_size, &m, why, whylen) ||
	    scan_function(ef, cs, "GC_size", arrays, arrays_size, &sz, why, whylen) ||
	    scan_function(ef, cs, "GC_base", arrays, arrays_size, &base, why, whylen))
		goto out;
	if (!m.top.seen || !m.key.seen || !m.link.seen || !m.bottom.seen || !m.marks.seen) {
		snprintf(why, whylen, "GC_is_marked in %s does not look like Boehm GC 7/8 "
			 "(top index %lld, key %lld, hash link %lld, bottom index %lld, marks %lld)",
			 ef->path, seen_off(&m.top), seen_off(&m.key), seen_off(&m.link),
			 seen_off(&m.bottom), seen_off(&m.marks));
		goto out;
	}
	l->hi_shift = m.top.ix.s;
	l->top_mask = (uint32_t)m.top.ix.m;
	l->log_hblk = m.bottom.ix.s;
	l->bottom_mask = (uint32_t)m.bottom.ix.m;
	l->granule_shift = m.marks.ix.s;
	bottom_bits = (unsigned)__builtin_popcountll(m.bottom.ix.m);
	/* Pointer-sized entries, masks of low bits, the bottom index's entries
	 * covering the bits between the block and the top index, and one mark
	 * byte a granule within the block. */
	if (m.top.ix.k != 3 || m.bottom.ix.k != 3 || m.marks.ix.k != 0 || m.bottom.off != 0 ||
	    m.top.ix.m >= (1u << 24) || (m.top.ix.m & (m.top.ix.m + 1)) ||
	    m.bottom.ix.m >= (1u << 24) || (m.bottom.ix.m & (m.bottom.ix.m + 1)) ||
	    l->log_hblk < 9 || l->log_hblk > 20 || l->hi_shift != l->log_hblk + bottom_bits ||
	    l->granule_shift < 3 || l->granule_shift > 5 ||
	    m.marks.ix.m + 1 < (1ull << (l->log_hblk - l->granule_shift))) {
		snprintf(why, whylen, "GC_is_marked in %s: unexpected shifts or masks "
			 "(top index p>>%u & 0x%llx, bottom index p>>%u & 0x%llx at +%lld, "
			 "mark byte p>>%u & 0x%llx)", ef->path,
			 m.top.ix.s, (unsigned long long)m.top.ix.m, m.bottom.ix.s,
			 (unsigned long long)m.bottom.ix.m, (long long)m.bottom.off,
			 m.marks.ix.s, (unsigned long long)m.marks.ix.m);
		goto out;
	}
	if (!sz.last_load.seen) {
		snprintf(why, whylen, "GC_size in %s does not load hb_sz", ef->path);
		goto out;
	}
	if (!base.flags.seen || base.flags_bit <= 0 || base.flags_bit > 0x80) {
		snprintf(why, whylen, "GC_base in %s does not test HBLK_IS_FREE", ef->path);
		goto out;
	}
	if (m.top.off < 0 || m.key.off < 0 || m.link.off < 0 || m.marks.off < 0 ||
	    sz.last_load.off < 0 || base.flags.off < 0 || m.key.off == m.link.off) {
		snprintf(why, whylen, "GC_is_marked in %s: unexpected offsets (top index %lld, "
			 "key %lld, hash link %lld, marks %lld, hb_sz %lld, hb_flags %lld)",
			 ef->path, (long long)m.top.off, (long long)m.key.off,
			 (long long)m.link.off, (long long)m.marks.off,
			 (long long)sz.last_load.off, (long long)base.flags.off);
		goto out;
	}
	l->arrays_vaddr = arrays;
	l->top_index_off = (uint32_t)m.top.off;
	l->bi_key_off = (uint32_t)m.key.off;
	l->bi_link_off = (uint32_t)m.link.off;
	l->hb_marks_off = (uint32_t)m.marks.off;
	l->hb_sz_off = (uint32_t)sz.last_load.off;
	l->hb_flags_off = (uint32_t)base.flags.off;
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
	char version[32] = "libgc version unknown";

	if (l->version)
		snprintf(version, sizeof(version), "libgc %u.%u.%u", l->version >> 16,
			 (l->version >> 8) & 0xff, l->version & 0xff);
	snprintf(buf, len, "%s, GC_arrays 0x%lx (%lu bytes), top_index +0x%x (%u entries, "
		 "p>>%u), bottom index key +0x%x hash_link +0x%x (%u entries, p>>%u), "
		 "header hb_sz +0x%x hb_flags +0x%x (free 0x%x) hb_marks +0x%x "
		 "(one byte per %u-byte granule)", version,
		 (unsigned long)l->arrays_vaddr, (unsigned long)l->arrays_size,
		 l->top_index_off, l->top_mask + 1, l->hi_shift,
		 l->bi_key_off, l->bi_link_off, l->bottom_mask + 1, l->log_hblk, l->hb_sz_off,
		 l->hb_flags_off, l->free_blk, l->hb_marks_off, 1u << l->granule_shift);
}
