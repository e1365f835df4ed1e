// SPDX-License-Identifier: MIT
/*
 * Builds compact unwind tables (see unwind_table.h) from .eh_frame and
 * .debug_frame.
 *
 * FDEs are enumerated by walking the sections themselves with
 * dwarf_next_cfi (so a missing or partial .eh_frame_hdr loses nothing) and
 * decoding each FDE's initial_location/address_range with its CIE's 'R'
 * pointer encoding.  The rows inside an .eh_frame FDE come from its
 * instructions, run once (cfa_program.c), unless they use what that does
 * not model; then, and for .debug_frame, from libdw: at an address,
 * dwarf_cfi_addrframe + dwarf_frame_info give the rule set and the [start,
 * end) range it holds for; we step from range to range to the FDE's end
 * (a search of the section's FDEs and a run from the FDE's start each:
 * half the build of libLLVM's 949K rows).
 */
#include "unwind/unwind_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/elf_file.h"
#include "unwind/cfa_program.h"
#include "unwind/leb128.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

struct interval {
	uint64_t start, end;
	struct alys_unwind_row r;	/* rules; r.pc unused */
};

struct ivec {
	struct interval *v;
	size_t n, cap;
};

struct cie_info {
	uint64_t off;
	uint8_t fde_enc;		/* DW_EH_PE_* for FDE addresses */
	bool signal;			/* 'S' augmentation */
	bool ok;			/* augmentation understood */
	bool z;				/* 'z': FDEs have augmentation data */
	struct cfa_cie prog;		/* for cfa_program_rows */
};

struct cies {
	struct cie_info *v;
	size_t n, cap;
};

struct build {
	const char *path;
	Elf *elf;
	GElf_Ehdr ehdr;
	struct alys_unwind_table *t;
	struct ivec eh, dbg;
	char *err;
	size_t errlen;
};

static int fail(struct build *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct build *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!b->err || !b->errlen)
		return -1;
	n = snprintf(b->err, b->errlen, "%s: ", b->path);
	if (n < 0 || (size_t)n >= b->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->err + n, b->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

const char *alys_cfa_type_name(unsigned int cfa_type)
{
	switch (cfa_type) {
	case ALYS_CFA_END: return "end";
	case ALYS_CFA_RSP: return "rsp";
	case ALYS_CFA_RBP: return "rbp";
	case ALYS_CFA_PLT: return "plt";
	case ALYS_CFA_UNSUPPORTED: return "unsupported";
	case ALYS_CFA_OUTERMOST: return "outermost";
	}
	return "?";
}

static int ivec_push(struct ivec *iv, uint64_t start, uint64_t end,
		     const struct alys_unwind_row *r)
{
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? iv->cap * 2 : 1024;
		struct interval *v = realloc(iv->v, cap * sizeof(*v));

		if (!v)
			return -1;
		iv->v = v;
		iv->cap = cap;
	}
	iv->v[iv->n].start = start;
	iv->v[iv->n].end = end;
	iv->v[iv->n].r = *r;
	iv->n++;
	return 0;
}

/* The order of address ranges: by start, the longer first on a tie. */
static int cmp_range(uint64_t xs, uint64_t xe, uint64_t ys, uint64_t ye)
{
	if (xs != ys)
		return xs < ys ? -1 : 1;
	return xe > ye ? -1 : xe < ye ? 1 : 0;
}

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	return cmp_range(x->start, x->end, y->start, y->end);
}

/* Sorts and makes the intervals disjoint: where two overlap, the one that
 * starts first (the longer one on a tie) keeps the shared PCs. */
static void ivec_normalize(struct ivec *iv)
{
	size_t i, o = 0;
	uint64_t covered = 0;

	if (!iv->n)
		return;
	/* sorted already (the merge of .eh_frame's rows with no .debug_frame
	 * rows): a sort would take a sixth of a big library's build */
	for (i = 1; i < iv->n && cmp_interval(&iv->v[i - 1], &iv->v[i]) <= 0; i++)
		;
	if (i < iv->n)
		qsort(iv->v, iv->n, sizeof(*iv->v), cmp_interval);
	for (i = 0; i < iv->n; i++) {
		struct interval x = iv->v[i];

		if (o && x.start < covered)
			x.start = covered;
		if (x.start >= x.end)
			continue;
		iv->v[o++] = x;
		covered = x.end;
	}
	iv->n = o;
}

/* ---- CFI section walking --------------------------------------------- */

/* Reads a DW_EH_PE_* encoded value's format part (no application).  Returns
 * false for an unknown format or truncation. */
static bool read_encoded_raw(const uint8_t **p, const uint8_t *end, uint8_t enc,
			     uint64_t *v)
{
	const uint8_t *q = *p;
	size_t sz;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: sz = 8; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: sz = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: sz = 4; break;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: sz = 8; break;
	case DW_EH_PE_uleb128: return read_uleb128(p, end, v);
	case DW_EH_PE_sleb128: {
		int64_t s;

		if (!read_sleb128(p, end, &s))
			return false;
		*v = (uint64_t)s;
		return true;
	}
	default:
		return false;
	}
	if ((size_t)(end - q) < sz)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_udata2: { uint16_t x; memcpy(&x, q, 2); *v = x; break; }
	case DW_EH_PE_sdata2: { int16_t x; memcpy(&x, q, 2); *v = (uint64_t)(int64_t)x; break; }
	case DW_EH_PE_udata4: { uint32_t x; memcpy(&x, q, 4); *v = x; break; }
	case DW_EH_PE_sdata4: { int32_t x; memcpy(&x, q, 4); *v = (uint64_t)(int64_t)x; break; }
	default: memcpy(v, q, 8); break;
	}
	*p = q + sz;
	return true;
}

static int parse_cie(const Dwarf_CIE *c, uint64_t off, bool eh, struct cie_info *ci)
{
	const char *a = c->augmentation;
	const uint8_t *p = c->augmentation_data;
	const uint8_t *end = p + c->augmentation_data_size;

	memset(ci, 0, sizeof(*ci));
	ci->off = off;
	ci->fde_enc = DW_EH_PE_absptr;
	ci->ok = true;
	ci->prog = (struct cfa_cie){ c->code_alignment_factor, c->data_alignment_factor,
				     c->return_address_register, c->initial_instructions,
				     c->initial_instructions_end };
	if (!a || !*a)
		return 0;
	if (a[0] != 'z') {
		/* .debug_frame CIEs have no 'z'; anything else we cannot size */
		ci->ok = !eh && !*a;
		return 0;
	}
	ci->z = true;
	for (a++; *a; a++) {
		uint64_t v;

		switch (*a) {
		case 'R':
			if (p >= end)
				goto bad;
			ci->fde_enc = *p++;
			break;
		case 'L':
			if (p >= end)
				goto bad;
			p++;
			break;
		case 'P': {
			uint8_t enc;

			if (p >= end)
				goto bad;
			enc = *p++;
			if ((enc & 0x70) == DW_EH_PE_aligned)
				goto bad;
			if (!read_encoded_raw(&p, end, enc, &v))
				goto bad;
			break;
		}
		case 'S':
			ci->signal = true;
			break;
		case 'B':	/* aarch64 BTI, no data */
		case 'G':	/* MTE tagged frames, no data */
			break;
		default:
			goto bad;	/* unknown: rest of the data unknown too */
		}
	}
	return 0;
bad:
	ci->ok = false;
	return 0;
}

static struct cie_info *find_cie(struct cies *cs, const unsigned char *ident,
				 Elf_Data *data, bool eh, uint64_t off)
{
	size_t i;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;

	for (i = cs->n; i-- > 0;)
		if (cs->v[i].off == off)
			return &cs->v[i];
	if (dwarf_next_cfi(ident, data, eh, off, &next, &e) != 0 ||
	    e.CIE_id != LIBDW_CIE_ID)
		return NULL;
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 16;
		struct cie_info *v = realloc(cs->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		cs->v = v;
		cs->cap = cap;
	}
	parse_cie(&e.cie, off, eh, &cs->v[cs->n]);
	return &cs->v[cs->n++];
}

/* True if start lies inside an executable PT_LOAD segment; *end is clipped
 * to that segment.  FDEs of code the linker discarded (address 0 or a
 * tombstone in .debug_frame) fail this. */
static bool in_exec_segment(const struct alys_unwind_table *t, uint64_t start,
			    uint64_t *end)
{
	size_t i;

	for (i = 0; i < t->nsegs; i++) {
		const struct alys_unwind_seg *s = &t->segs[i];

		if ((s->flags & PF_X) && start >= s->vaddr &&
		    start < s->vaddr + s->memsz) {
			if (*end > s->vaddr + s->memsz)
				*end = s->vaddr + s->memsz;
			return true;
		}
	}
	return false;
}

struct fde_range {
	uint64_t start, end;
	bool signal;
	struct cfa_cie cie;
	const uint8_t *insns, *insns_end;	/* NULL: libdw's rows only */
};

typedef int (*fde_fn)(struct build *b, const struct fde_range *fr, void *arg);

/* As cmp_interval: the rows come out in the order it sorts them in. */
static int cmp_fde(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return cmp_range(x->start, x->end, y->start, y->end);
}

/* Calls fn for every FDE of a CFI section that decodes to a non-empty range
 * inside an executable segment, in address order: each FDE's rows come out
 * in order, so the rows of all come out sorted, where in the section's
 * order (libLLVM's 859K rows) their sort took a quarter of the build. */
static int each_fde(struct build *b, Elf_Data *data, uint64_t sh_addr, bool eh,
		    fde_fn fn, void *arg)
{
	const unsigned char *ident = (const unsigned char *)b->ehdr.e_ident;
	struct cies cs = { 0 };
	struct fde_range *fv = NULL;
	size_t nfv = 0, fv_cap = 0;
	Dwarf_Off off = 0, next;
	int rc = 0;

	while (off < data->d_size) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(ident, data, eh, off, &next, &e);
		struct cie_info *ci;
		const uint8_t *p, *end;
		uint64_t loc, len, field_addr, aug = 0;
		struct fde_range fr;

		if (r == 1)
			break;
		if (r < 0) {
			/* A corrupt entry ends the walk; keep what we have. */
			b->t->stats.fde_skipped++;
			break;
		}
		off = next;
		if (e.CIE_id == LIBDW_CIE_ID)
			continue;
		ci = find_cie(&cs, ident, data, eh, e.fde.CIE_pointer);
		if (!ci || !ci->ok) {
			b->t->stats.fde_skipped++;
			continue;
		}
		p = e.fde.start;
		end = e.fde.end;
		field_addr = sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
		if (!read_encoded_raw(&p, end, ci->fde_enc, &loc) ||
		    !read_encoded_raw(&p, end, ci->fde_enc & 0x0f, &len)) {
			b->t->stats.fde_skipped++;
			continue;
		}
		switch (ci->fde_enc & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:
			loc += field_addr;
			break;
		default:	/* textrel/datarel/funcrel: not used on x86-64 */
			b->t->stats.fde_skipped++;
			continue;
		}
		if (ci->fde_enc & DW_EH_PE_indirect) {
			b->t->stats.fde_skipped++;
			continue;
		}
		fr.start = loc;
		fr.end = loc + len;
		fr.signal = ci->signal;
		fr.cie = ci->prog;
		fr.insns = NULL;
		if (eh && (!ci->z || (read_uleb128(&p, end, &aug) && aug <= (uint64_t)(end - p)))) {
			fr.insns = ci->z ? p + aug : p;
			fr.insns_end = end;
		}
		if (len == 0 || fr.end < fr.start ||
		    !in_exec_segment(b->t, fr.start, &fr.end)) {
			b->t->stats.fde_skipped++;
			continue;
		}
		if (nfv == fv_cap) {
			size_t cap = fv_cap ? fv_cap * 2 : 1024;
			struct fde_range *v = realloc(fv, cap * sizeof(*v));

			if (!v) {
				rc = fail(b, "out of memory");
				break;
			}
			fv = v;
			fv_cap = cap;
		}
		fv[nfv++] = fr;
	}
	free(cs.v);
	if (!rc && nfv)
		qsort(fv, nfv, sizeof(*fv), cmp_fde);
	for (size_t i = 0; !rc && i < nfv; i++)
		rc = fn(b, &fv[i], arg);
	free(fv);
	return rc;
}

/* ---- Rules ------------------------------------------------------------ */

static bool is_plt_expr(const Dwarf_Op *o, size_t n)
{
	return n == 9 &&
	       o[0].atom == DW_OP_breg7 && (int64_t)o[0].number == 8 &&
	       o[1].atom == DW_OP_breg16 && o[1].number == 0 &&
	       o[2].atom == DW_OP_lit15 && o[3].atom == DW_OP_and &&
	       o[4].atom == DW_OP_lit11 && o[5].atom == DW_OP_ge &&
	       o[6].atom == DW_OP_lit3 && o[7].atom == DW_OP_shl &&
	       o[8].atom == DW_OP_plus;
}

/* "Saved at CFA + off": libdw gives call_frame_cfa [plus_uconst off]. */
static bool cfa_offset_rule(const Dwarf_Op *o, size_t n, int64_t *off)
{
	if (n < 1 || n > 2 || o[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*off = 0;
		return true;
	}
	if (o[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)o[1].number;
	return true;
}

static void classify(Dwarf_Frame *fr, bool signal, struct alys_unwind_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	memset(r, 0, sizeof(*r));
	r->cfa_type = ALYS_CFA_UNSUPPORTED;
	if (signal)
		return;

	/* Return address: must be at CFA-8, or undefined (outermost). */
	if (dwarf_frame_register(fr, REG_RA, mem, &ops, &nops) != 0)
		return;
	if (nops == 0) {
		if (ops == mem)
			r->cfa_type = ALYS_CFA_OUTERMOST;
		return;		/* same value: not a call frame */
	}
	if (!cfa_offset_rule(ops, nops, &off) || off != -8)
		return;

	/* CFA */
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops == 0)
		return;
	if (nops == 1 && (ops[0].atom == DW_OP_bregx ||
			  (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		uint64_t reg;

		if (ops[0].atom == DW_OP_bregx) {
			reg = ops[0].number;
			off = (int64_t)ops[0].number2;
		} else {
			reg = ops[0].atom - DW_OP_breg0;
			off = (int64_t)ops[0].number;
		}
		if (off < INT32_MIN || off > INT32_MAX)
			return;
		if (reg == REG_RSP)
			r->cfa_type = ALYS_CFA_RSP;
		else if (reg == REG_RBP)
			r->cfa_type = ALYS_CFA_RBP;
		else
			return;
		r->cfa_offset = (int32_t)off;
	} else if (is_plt_expr(ops, nops)) {
		r->cfa_type = ALYS_CFA_PLT;
	} else {
		return;
	}

	/* rbp */
	r->rbp_type = ALYS_RBP_UNSUPPORTED;
	if (dwarf_frame_register(fr, REG_RBP, mem, &ops, &nops) != 0)
		return;
	if (nops == 0) {
		if (ops == NULL)
			r->rbp_type = ALYS_RBP_SAME;
		/* else undefined: the caller's rbp is lost */
		return;
	}
	if (cfa_offset_rule(ops, nops, &off) && off >= INT16_MIN && off <= INT16_MAX) {
		r->rbp_type = ALYS_RBP_OFFSET;
		r->rbp_offset = (int16_t)off;
	}
}

static bool same_rules(const struct alys_unwind_row *a, const struct alys_unwind_row *b)
{
	return a->cfa_type == b->cfa_type && a->cfa_offset == b->cfa_offset &&
	       a->rbp_type == b->rbp_type && a->rbp_offset == b->rbp_offset;
}

/* Appends the range's row to iv, or extends the last one it continues. */
static int push_range(struct ivec *iv, uint64_t start, uint64_t end,
		      const struct alys_unwind_row *r)
{
	if (iv->n && iv->v[iv->n - 1].end == start && same_rules(&iv->v[iv->n - 1].r, r)) {
		iv->v[iv->n - 1].end = end;
		return 0;
	}
	return ivec_push(iv, start, end, r);
}

static int push_cfa_row(uint64_t start, uint64_t end, const struct alys_unwind_row *r,
			void *arg)
{
	return push_range(arg, start, end, r) ? -1 : 0;
}

/* Appends the rows of [lo, hi) (part of one FDE) to iv. */
static int walk_rows(struct build *b, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi,
		     bool signal, struct ivec *iv)
{
	uint64_t addr = lo;

	while (addr < hi) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr s, e;
		bool sig = false;
		struct alys_unwind_row r;

		if (dwarf_cfi_addrframe(cfi, addr, &fr) != 0 ||
		    dwarf_frame_info(fr, &s, &e, &sig) < 0 || s > addr || e <= addr) {
			free(fr);
			memset(&r, 0, sizeof(r));
			r.cfa_type = ALYS_CFA_UNSUPPORTED;
			b->t->stats.cfi_errors++;
			return ivec_push(iv, addr, hi, &r);
		}
		if (e > hi)
			e = hi;
		classify(fr, signal || sig, &r);
		free(fr);
		if (push_range(iv, addr, e, &r))
			return -1;
		addr = e;
	}
	return 0;
}

struct eh_ctx {
	Dwarf_CFI *cfi;
	bool libdw_only;	/* ALYS_CFI_LIBDW: tests compare the two */
};

static int eh_fde(struct build *b, const struct fde_range *fr, void *arg)
{
	struct eh_ctx *c = arg;
	int r = 1;

	b->t->stats.fde_eh++;
	if (fr->insns && !fr->signal && !c->libdw_only)
		r = cfa_program_rows(&fr->cie, fr->insns, fr->insns_end, fr->start, fr->end,
				     push_cfa_row, &b->eh);
	if (r == 0)
		b->t->stats.fde_interpreted++;
	if (r < 0 || (r > 0 && walk_rows(b, c->cfi, fr->start, fr->end, fr->signal, &b->eh)))
		return fail(b, "out of memory");
	return 0;
}

struct dbg_ctx {
	Dwarf_CFI *cfi;
	const struct interval *cov;	/* disjoint, sorted (.eh_frame) */
	size_t ncov;
};

/* Rows for the parts of a .debug_frame FDE that .eh_frame does not cover. */
static int dbg_fde(struct build *b, const struct fde_range *fr, void *arg)
{
	struct dbg_ctx *c = arg;
	uint64_t pos = fr->start;
	size_t lo = 0, hi = c->ncov;
	bool added = false;

	/* first eh interval with end > start */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->cov[mid].end <= fr->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; pos < fr->end; lo++) {
		uint64_t gap_end = fr->end;

		if (lo < c->ncov && c->cov[lo].start < gap_end)
			gap_end = c->cov[lo].start;
		if (gap_end > pos) {
			added = true;
			if (walk_rows(b, c->cfi, pos, gap_end, fr->signal, &b->dbg))
				return fail(b, "out of memory");
		}
		if (lo >= c->ncov)
			break;
		if (c->cov[lo].end > pos)
			pos = c->cov[lo].end;
	}
	if (added)
		b->t->stats.fde_debug++;
	return 0;
}

/* ---- ELF -------------------------------------------------------------- */

static Elf_Scn *find_section(struct build *b, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(b->elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(b->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(b->elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			/* lld and gold type .eh_frame SHT_X86_64_UNWIND */
			return sh->sh_type == SHT_PROGBITS ||
			       sh->sh_type == SHT_X86_64_UNWIND ? scn : NULL;
	}
	return NULL;
}

static Elf_Data *section_data(Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *d;

	if (sh->sh_flags & SHF_COMPRESSED) {
		if (elf_compress(scn, 0, 0) < 0)
			return NULL;
		gelf_getshdr(scn, sh);
	}
	d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size ? d : NULL;
}

static int read_segments(struct build *b)
{
	size_t i, n;
	struct alys_unwind_table *t = b->t;

	if (elf_getphdrnum(b->elf, &n) != 0)
		return fail(b, "cannot read program headers: %s", elf_errmsg(-1));
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr + ph.p_memsz >= (1ULL << 32) ||
		    ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return fail(b, "PT_LOAD segment at %#llx+%#llx is beyond 4 GiB; "
				    "unwind rows hold 32-bit addresses",
				    (unsigned long long)ph.p_vaddr,
				    (unsigned long long)ph.p_memsz);
		if (t->nsegs == ALYS_UNWIND_MAX_SEGS)
			return fail(b, "more than %d PT_LOAD segments", ALYS_UNWIND_MAX_SEGS);
		t->segs[t->nsegs].vaddr = ph.p_vaddr;
		t->segs[t->nsegs].offset = ph.p_offset;
		t->segs[t->nsegs].filesz = ph.p_filesz;
		t->segs[t->nsegs].memsz = ph.p_memsz;
		t->segs[t->nsegs].flags = ph.p_flags;
		t->nsegs++;
	}
	if (!t->nsegs)
		return fail(b, "no PT_LOAD segment (not an executable or shared object)");
	return 0;
}

static int push_row(struct alys_unwind_table *t, size_t *cap, uint64_t pc,
		    const struct alys_unwind_row *rules)
{
	struct alys_unwind_row r = *rules;

	if (t->nrows && same_rules(&t->rows[t->nrows - 1], &r))
		return 0;
	if (t->nrows && t->rows[t->nrows - 1].pc == pc) {
		/* zero-length previous row: replace it */
		t->nrows--;
		if (t->nrows && same_rules(&t->rows[t->nrows - 1], &r))
			return 0;
	}
	if (t->nrows == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		struct alys_unwind_row *v = realloc(t->rows, c * sizeof(*v));

		if (!v)
			return -1;
		t->rows = v;
		*cap = c;
	}
	r.pc = (uint32_t)pc;
	t->rows[t->nrows++] = r;
	return 0;
}

/* Merges eh and dbg (each disjoint; dbg already clipped against eh) into
 * the final rows. */
static int emit_rows(struct build *b)
{
	struct alys_unwind_table *t = b->t;
	struct ivec all = { 0 };
	struct alys_unwind_row end_rule = { 0 };
	size_t i, cap = 0;
	uint64_t prev_end = 0;
	bool have_prev = false;
	int rc = 0;

	all.n = b->eh.n + b->dbg.n;
	all.cap = all.n;
	all.v = malloc((all.n ? all.n : 1) * sizeof(*all.v));
	if (!all.v)
		return fail(b, "out of memory");
	if (b->eh.n)
		memcpy(all.v, b->eh.v, b->eh.n * sizeof(*all.v));
	if (b->dbg.n)
		memcpy(all.v + b->eh.n, b->dbg.v, b->dbg.n * sizeof(*all.v));
	ivec_normalize(&all);

	for (i = 0; i < all.n && !rc; i++) {
		const struct interval *x = &all.v[i];
		struct alys_unwind_row r = x->r;

		if (r.cfa_type == ALYS_CFA_END || r.cfa_type == ALYS_CFA_UNSUPPORTED ||
		    r.cfa_type == ALYS_CFA_OUTERMOST) {
			r.cfa_offset = 0;
			r.rbp_type = ALYS_RBP_SAME;
			r.rbp_offset = 0;
		}
		if (have_prev && x->start > prev_end)
			rc = push_row(t, &cap, prev_end, &end_rule);
		if (!rc)
			rc = push_row(t, &cap, x->start, &r);
		prev_end = x->end;
		have_prev = true;
	}
	if (!rc)
		rc = push_row(t, &cap, have_prev ? prev_end : 0, &end_rule);
	/* push_row skips a row identical to the previous one; the table must
	 * still end with an END row, which it does: END follows a non-END. */
	free(all.v);
	if (rc)
		return fail(b, "out of memory");

	for (i = 0; i < t->nrows; i++) {
		switch (t->rows[i].cfa_type) {
		case ALYS_CFA_UNSUPPORTED: t->stats.rows_unsupported++; break;
		case ALYS_CFA_PLT: t->stats.rows_plt++; break;
		case ALYS_CFA_OUTERMOST: t->stats.rows_outermost++; break;
		}
		if (t->rows[i].rbp_type == ALYS_RBP_UNSUPPORTED)
			t->stats.rows_rbp_unsupported++;
	}
	return 0;
}

int alys_unwind_table_build(const char *path, struct alys_unwind_table *out,
			    char *err, size_t errlen)
{
	struct build b = { .path = path, .t = out, .err = err, .errlen = errlen };
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d;
	Dwarf *dw = NULL;
	Dwarf_CFI *ehcfi = NULL;
	struct elf_file ef;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = 0;
	if (elf_file_open(&ef, path, err, errlen))
		return -1;
	b.elf = ef.elf;
	b.ehdr = ef.ehdr;
	if (b.ehdr.e_type != ET_EXEC && b.ehdr.e_type != ET_DYN) {
		fail(&b, "ELF type %u is not an executable or shared object",
		     (unsigned)b.ehdr.e_type);
		goto out;
	}
	out->is_dyn = b.ehdr.e_type == ET_DYN;
	if (read_segments(&b))
		goto out;

	scn = find_section(&b, ".eh_frame", &sh);
	if (scn && (d = section_data(scn, &sh))) {
		struct eh_ctx c;

		ehcfi = dwarf_getcfi_elf(b.elf);
		if (!ehcfi) {
			fail(&b, ".eh_frame: %s", dwarf_errmsg(-1));
			goto out;
		}
		c.cfi = ehcfi;
		c.libdw_only = getenv("ALYS_CFI_LIBDW") && *getenv("ALYS_CFI_LIBDW");
		if (each_fde(&b, d, sh.sh_addr, true, eh_fde, &c))
			goto out;
	}
	ivec_normalize(&b.eh);

	scn = find_section(&b, ".debug_frame", &sh);
	if (scn && (d = section_data(scn, &sh))) {
		dw = dwarf_begin_elf(b.elf, DWARF_C_READ, NULL);
		if (dw) {
			struct dbg_ctx c = { .cov = b.eh.v, .ncov = b.eh.n };

			c.cfi = dwarf_getcfi(dw);
			if (c.cfi && each_fde(&b, d, 0, false, dbg_fde, &c))
				goto out;
		}
		/* else libdw rejected the file's DWARF: .eh_frame only */
	}
	ivec_normalize(&b.dbg);

	if (emit_rows(&b))
		goto out;
	rc = 0;
out:
	if (ehcfi)
		dwarf_cfi_end(ehcfi);
	if (dw)
		dwarf_end(dw);
	elf_file_close(&ef);
	free(b.eh.v);
	free(b.dbg.v);
	if (rc)
		alys_unwind_table_free(out);
	return rc;
}

void alys_unwind_table_free(struct alys_unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

const struct alys_unwind_row *alys_unwind_find_row(const struct alys_unwind_table *t,
						   uint64_t pc)
{
	size_t lo = 0, hi = t->nrows;

	if (!t->nrows || pc < t->rows[0].pc)
		return NULL;
	if (pc >= (1ULL << 32))
		return &t->rows[t->nrows - 1];	/* END */
	/* last row with row.pc <= pc */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

int alys_unwind_table_bias(const struct alys_unwind_table *t, uint64_t map_start,
			   uint64_t map_offset, uint64_t *bias)
{
	size_t i;
	int pass;

	/* Executable segments first: a file page can sit at the end of one
	 * segment and the start of the next, mapped twice at different vaddrs. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < t->nsegs; i++) {
			const struct alys_unwind_seg *s = &t->segs[i];
			uint64_t page_off = s->offset & ~0xfffULL;

			if ((pass == 0) != ((s->flags & PF_X) != 0))
				continue;
			if (map_offset >= page_off &&
			    map_offset < s->offset + (s->filesz ? s->filesz : 1)) {
				/* file offset o is at vaddr s->vaddr + o - s->offset */
				*bias = map_start - (s->vaddr + map_offset - s->offset);
				return 0;
			}
		}
	}
	return -1;
}
