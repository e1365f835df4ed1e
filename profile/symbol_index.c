// SPDX-License-Identifier: MIT
#include "profile/symbol_index.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/crystal_display.h"
#include "lib/module_namer.h"
#include "lib/util.h"

struct symbol_entry {
	uint64_t start, end;	/* [start, end); end == start: size unknown */
	const char *name;
	int rank;		/* among symbols at one address: higher wins */
};

static int by_start(const void *a, const void *b)
{
	const struct symbol_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return y->rank - x->rank;	/* best first */
}

static void build(struct symbol_index *ix, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	size_t cap = 0;

	ix->built = 1;
	ix->namer = module_namer_new(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx,
							   NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		struct symbol_entry *e;

		if (!name || !*name || !module_symbol_is_code(&sym))
			continue;
		ix->syms = grow_array(ix->syms, &cap, ix->nr + 1, sizeof(*ix->syms));
		e = &ix->syms[ix->nr++];
		e->start = addr;
		e->end = addr + sym.st_size;
		e->name = name;
		/* sized before sizeless, functions before labels, global first */
		e->rank = (sym.st_size ? 8 : 0) + (type != STT_NOTYPE ? 4 : 0) +
			  (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0);
	}
	if (ix->nr > 1)	/* syms is NULL when there are none */
		qsort(ix->syms, ix->nr, sizeof(*ix->syms), by_start);
}

struct crystal_namer *symbol_index_namer(struct symbol_index *ix, Dwfl_Module *mod)
{
	if (!ix->built)
		build(ix, mod);
	return ix->namer;
}

/* The best symbol at the nearest start at or below addr, or NULL when none
 * starts there. */
static const struct symbol_entry *nearest(struct symbol_index *ix, Dwfl_Module *mod,
					  uint64_t addr)
{
	size_t lo = 0, hi;

	if (!ix->built)
		build(ix, mod);
	hi = ix->nr;
	while (lo < hi) {	/* first symbol starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (ix->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	hi = lo - 1;
	while (hi > 0 && ix->syms[hi - 1].start == ix->syms[lo - 1].start)
		hi--;
	return &ix->syms[hi];
}

const char *symbol_index_lookup(struct symbol_index *ix, Dwfl_Module *mod, uint64_t addr)
{
	const struct symbol_entry *e = nearest(ix, mod, addr);

	/* sizeless or ended before addr: libdwfl's rules decide */
	return e && e->end > addr ? e->name : NULL;
}

const char *symbol_index_at(struct symbol_index *ix, Dwfl_Module *mod, uint64_t addr)
{
	const struct symbol_entry *e = nearest(ix, mod, addr);

	return e && e->start == addr && e->end > addr ? e->name : NULL;
}

void symbol_index_free(struct symbol_index *ix)
{
	free(ix->syms);
	crystal_namer_free(ix->namer);
	ix->namer = NULL;
	ix->syms = NULL;
	ix->nr = 0;
	ix->built = 0;
}
