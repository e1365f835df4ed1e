// SPDX-License-Identifier: MIT
#include "profile/line_index.h"

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/util.h"

struct line_row {
	uint64_t addr;
	const char *file;	/* owned by libdw, lives as long as the Dwfl */
	uint32_t line;
	bool end;		/* end of a sequence: no code from here on */
};

static int by_addr(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* a sequence that starts where another ends must win the tie */
	return (int)y->end - (int)x->end;
}

static void add_cu_lines(struct line_index *li, size_t *cap, Dwarf_Die *cu,
			 Dwarf_Addr bias)
{
	Dwarf_Lines *lines;
	size_t n;

	if (dwarf_getsrclines(cu, &lines, &n))
		return;
	li->rows = grow_array(li->rows, cap, li->nr + n, sizeof(*li->rows));
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct line_row *r = &li->rows[li->nr];
		Dwarf_Addr a;
		int lineno = 0;
		bool end = false;

		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &end))
			continue;
		dwarf_lineno(l, &lineno);
		r->addr = a + bias;
		r->end = end;
		r->line = lineno > 0 ? (uint32_t)lineno : 0;
		r->file = dwarf_linesrc(l, NULL, NULL);
		li->nr++;
	}
}

static void build(struct line_index *li, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next;
	size_t header_size, cap = 0;

	li->built = 1;
	if (!dw)
		return;
	while (!dwarf_nextcu(dw, off, &next, &header_size, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + header_size, &cu))
			add_cu_lines(li, &cap, &cu, bias);
		off = next;
	}
	if (li->nr > 1)	/* rows is NULL when there are none */
		qsort(li->rows, li->nr, sizeof(*li->rows), by_addr);
}

int line_index_lookup(struct line_index *li, Dwfl_Module *mod, uint64_t addr,
		      const char **file, uint32_t *line)
{
	size_t lo = 0, hi;
	const struct line_row *r;

	if (!li->built)
		build(li, mod);
	/* last row at or below addr */
	hi = li->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (li->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	r = &li->rows[lo - 1];
	if (r->end || !r->file || !r->line)
		return -1;
	*file = r->file;
	*line = r->line;
	return 0;
}

void line_index_free(struct line_index *li)
{
	free(li->rows);
	li->rows = NULL;
	li->nr = 0;
	li->built = 0;
}
