// SPDX-License-Identifier: MIT
#include "profile/inline_index.h"

#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

struct subprog_range {
	uint64_t low, high;	/* [low, high) in the Dwfl address space */
	Dwarf_Off die;		/* the DW_TAG_subprogram */
};

/* A concrete subprogram that is an out-of-line copy of an abstract one. */
struct outline_copy {
	Dwarf_Off origin;
	uint64_t addr;		/* its low_pc, in the Dwfl address space */
};

static int by_origin(const void *a, const void *b)
{
	const struct outline_copy *x = a, *y = b;

	return x->origin < y->origin ? -1 : x->origin > y->origin;
}

static int by_low(const void *a, const void *b)
{
	const struct subprog_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return 0;
}

static void add_ranges(struct inline_index *ix, size_t *cap, Dwarf_Die *die,
		       Dwarf_Addr bias)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		struct subprog_range *r;

		if (end <= start)
			continue;
		ix->ranges = grow_array(ix->ranges, cap, ix->nr + 1, sizeof(*ix->ranges));
		r = &ix->ranges[ix->nr++];
		r->low = start + bias;
		r->high = end + bias;
		r->die = dwarf_dieoffset(die);
	}
}

/* The abstract origin a DIE names, or 0. */
static Dwarf_Off origin_of(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;

	if (!dwarf_attr(die, DW_AT_abstract_origin, &attr) || !dwarf_formref_die(&attr, &origin))
		return 0;
	return dwarf_dieoffset(&origin);
}

static void add_outline(struct inline_index *ix, size_t *cap, Dwarf_Die *die, Dwarf_Addr bias)
{
	Dwarf_Off origin = origin_of(die);
	Dwarf_Addr low;

	if (!origin || dwarf_lowpc(die, &low))
		return;
	ix->outlines = grow_array(ix->outlines, cap, ix->nr_outlines + 1, sizeof(*ix->outlines));
	ix->outlines[ix->nr_outlines++] = (struct outline_copy){ origin, low + bias };
}

/* Subprograms are children of the CU, or of namespaces and classes (C++). */
static void scan_children(struct inline_index *ix, size_t *cap, size_t *ocap, Dwarf_Die *parent,
			  Dwarf_Addr bias, int level)
{
	Dwarf_Die child;

	if (level > 8 || dwarf_child(parent, &child))
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			add_ranges(ix, cap, &child, bias);
			add_outline(ix, ocap, &child, bias);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_module:
			scan_children(ix, cap, ocap, &child, bias, level + 1);
			break;
		}
	} while (!dwarf_siblingof(&child, &child));
}

static void build(struct inline_index *ix, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next;
	size_t header_size, cap = 0, ocap = 0;

	ix->built = 1;
	if (!dw)
		return;
	while (!dwarf_nextcu(dw, off, &next, &header_size, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + header_size, &cu))
			scan_children(ix, &cap, &ocap, &cu, bias, 0);
		off = next;
	}
	if (ix->nr > 1)	/* ranges is NULL when there are none */
		qsort(ix->ranges, ix->nr, sizeof(*ix->ranges), by_low);
	if (ix->nr_outlines > 1)
		qsort(ix->outlines, ix->nr_outlines, sizeof(*ix->outlines), by_origin);
}

static uint64_t outline_of(const struct inline_index *ix, Dwarf_Off origin)
{
	size_t lo = 0, hi = ix->nr_outlines;

	while (origin && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->outlines[mid].origin == origin)
			return ix->outlines[mid].addr;
		if (ix->outlines[mid].origin < origin)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static const struct subprog_range *find(const struct inline_index *ix, uint64_t addr)
{
	size_t lo = 0, hi = ix->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->ranges[mid].low <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges do not nest, but a bad producer may overlap a few: look back */
	for (size_t i = lo, seen = 0; i-- > 0 && seen < 4; seen++)
		if (addr < ix->ranges[i].high)
			return &ix->ranges[i];
	return NULL;
}

static const char *file_of(Dwarf_Die *die, unsigned int attr_name)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nfiles;

	if (!dwarf_attr_integrate(die, attr_name, &attr) || dwarf_formudata(&attr, &idx))
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) ||
	    idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static uint32_t udata_of(Dwarf_Die *die, unsigned int attr_name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!dwarf_attr_integrate(die, attr_name, &attr) || dwarf_formudata(&attr, &v) ||
	    v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

static bool may_contain(Dwarf_Die *die, Dwarf_Addr pc)
{
	return dwarf_haspc(die, pc) > 0;
}

int inline_index_lookup(struct inline_index *ix, Dwfl_Module *mod, uint64_t addr,
			struct inline_call *calls, int max)
{
	struct inline_call outer_first[INLINE_MAX_DEPTH];
	const struct subprog_range *r;
	Dwarf_Die scope, child;
	Dwarf_Addr bias;
	Dwarf *dw;
	int n = 0;

	if (!ix->built)
		build(ix, mod);
	r = find(ix, addr);
	dw = r ? dwfl_module_getdwarf(mod, &bias) : NULL;
	if (!dw || !dwarf_offdie(dw, r->die, &scope))
		return 0;
	if (max > INLINE_MAX_DEPTH)
		max = INLINE_MAX_DEPTH;
	/* descend through the innermost scopes holding pc, outermost first */
	while (n < max && !dwarf_child(&scope, &child)) {
		bool found = false;

		do {
			int tag = dwarf_tag(&child);

			if ((tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) ||
			    !may_contain(&child, addr - bias))
				continue;
			if (tag == DW_TAG_inlined_subroutine) {
				struct inline_call *c = &outer_first[n++];

				c->name = dwarf_diename(&child);
				if (!c->name)
					c->name = "??";
				c->decl_file = file_of(&child, DW_AT_decl_file);
				c->decl_line = udata_of(&child, DW_AT_decl_line);
				c->call_file = file_of(&child, DW_AT_call_file);
				c->call_line = udata_of(&child, DW_AT_call_line);
				c->call_column = udata_of(&child, DW_AT_call_column);
				c->outline_addr = outline_of(ix, origin_of(&child));
				c->die = dwarf_dieoffset(&child);
			}
			scope = child;
			found = true;
			break;
		} while (!dwarf_siblingof(&child, &child));
		if (!found)
			break;
	}
	for (int i = 0; i < n; i++)
		calls[i] = outer_first[n - 1 - i];
	return n;
}

struct span {
	uint64_t low, high;
};

static int by_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

/* The code of the inlined calls below die (through lexical blocks), which
 * is theirs, not die's own. */
static void add_holes(Dwarf_Die *die, struct span **holes, size_t *nr, size_t *cap, int level)
{
	Dwarf_Die child;

	if (level > INLINE_MAX_DEPTH || dwarf_child(die, &child))
		return;
	do {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		if (dwarf_tag(&child) == DW_TAG_lexical_block) {
			add_holes(&child, holes, nr, cap, level + 1);
			continue;
		}
		if (dwarf_tag(&child) != DW_TAG_inlined_subroutine)
			continue;
		while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0) {
			*holes = grow_array(*holes, cap, *nr + 1, sizeof(**holes));
			(*holes)[(*nr)++] = (struct span){ start, end };
		}
	} while (!dwarf_siblingof(&child, &child));
}

/* The bytes at ELF address a, and how many follow in its section. */
static const uint8_t *code_at(Elf *elf, GElf_Addr a, size_t *avail)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || a < sh.sh_addr || a >= sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || a - sh.sh_addr >= d->d_size)
			return NULL;
		*avail = d->d_size - (size_t)(a - sh.sh_addr);
		return (const uint8_t *)d->d_buf + (a - sh.sh_addr);
	}
	return NULL;
}

/* Where the code is read from: the module's ELF, and a scratch
 * instruction. */
struct code_reader {
	Elf *elf;
	GElf_Addr ebias;	/* Dwfl address - ELF address */
	cs_insn *in;
};

/* The targets of the direct calls and jumps (e8/e9 rel32) in [low, high) of
 * the Dwfl address space, appended to ix->callees. */
static void scan_calls(struct inline_index *ix, const struct code_reader *r, uint64_t low,
		       uint64_t high, size_t first)
{
	uint64_t addr = low - r->ebias;
	const uint8_t *code;
	size_t avail = 0, left;
	cs_insn *in = r->in;

	if (low < r->ebias || !(code = code_at(r->elf, addr, &avail)))
		return;
	left = high - low < avail ? (size_t)(high - low) : avail;
	while (cs_disasm_iter((csh)ix->cs, &code, &left, &addr, in)) {
		int32_t rel;
		uint64_t target;
		size_t k;

		if (in->size != 5 || (in->bytes[0] != 0xe8 && in->bytes[0] != 0xe9))
			continue;
		memcpy(&rel, in->bytes + 1, 4);
		target = in->address + 5 + (uint64_t)(int64_t)rel + r->ebias;
		for (k = first; k < ix->nr_callees && ix->callees[k] != target; k++)
			;
		if (k < ix->nr_callees)
			continue;
		ix->callees = grow_array(ix->callees, &ix->cap_callees, ix->nr_callees + 1,
					 sizeof(*ix->callees));
		ix->callees[ix->nr_callees++] = target;
	}
}

size_t inline_index_callees(struct inline_index *ix, Dwfl_Module *mod,
			    const struct inline_call *call, const uint64_t **targets)
{
	const struct u64_slot *hit = u64_table_get(&ix->calls_of, call->die + 1);
	struct span *holes = NULL;
	struct code_reader r;
	size_t nr_holes = 0, cap_holes = 0, first = ix->nr_callees;
	Dwarf_Addr dbias, base, start, end;
	Dwarf *dw;
	Dwarf_Die die;
	ptrdiff_t off = 0;

	if (hit) {
		*targets = ix->callees + hit->a;
		return hit->b;
	}
	*targets = NULL;
	if (!ix->cs && !ix->cs_failed) {
		csh h;

		if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK)
			ix->cs = (size_t)h;
		else
			ix->cs_failed = 1;
	}
	dw = dwfl_module_getdwarf(mod, &dbias);
	r.elf = dwfl_module_getelf(mod, &r.ebias);
	if (ix->cs_failed || !dw || !r.elf || !dwarf_offdie(dw, call->die, &die) ||
	    !(r.in = cs_malloc((csh)ix->cs)))
		return 0;
	add_holes(&die, &holes, &nr_holes, &cap_holes, 0);
	if (nr_holes > 1)
		qsort(holes, nr_holes, sizeof(*holes), by_span);
	while ((off = dwarf_ranges(&die, off, &base, &start, &end)) > 0) {
		uint64_t at = start;	/* [start, end) less the holes in it */

		for (size_t i = 0; i < nr_holes && at < end; i++) {
			if (holes[i].high <= at || holes[i].low >= end)
				continue;
			if (holes[i].low > at)
				scan_calls(ix, &r, at + dbias, holes[i].low + dbias, first);
			at = holes[i].high;
		}
		if (at < end)
			scan_calls(ix, &r, at + dbias, end + dbias, first);
	}
	cs_free(r.in, 1);
	free(holes);
	u64_table_put(&ix->calls_of, call->die + 1, first, (uint32_t)(ix->nr_callees - first));
	*targets = ix->callees + first;
	return ix->nr_callees - first;
}

void inline_index_free(struct inline_index *ix)
{
	if (ix->cs) {
		csh h = (csh)ix->cs;

		cs_close(&h);
	}
	u64_table_free(&ix->calls_of);
	free(ix->callees);
	ix->callees = NULL;
	ix->nr_callees = ix->cap_callees = 0;
	ix->cs = 0;
	ix->cs_failed = 0;
	free(ix->ranges);
	free(ix->outlines);
	ix->ranges = NULL;
	ix->outlines = NULL;
	ix->nr = 0;
	ix->nr_outlines = 0;
	ix->built = 0;
}
