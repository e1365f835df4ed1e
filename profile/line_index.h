/* SPDX-License-Identifier: MIT */
/*
 * Address -> source line for modules whose DWARF libdw cannot search by
 * address. Crystal writes neither .debug_aranges nor address ranges on its
 * compile units, so dwfl_module_getsrc() finds nothing there although every
 * line table is present. This reads all line tables of a module once into
 * one sorted array and answers by binary search.
 */
#ifndef ALYS_CONV_LINE_INDEX_H
#define ALYS_CONV_LINE_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct line_row;

struct line_index {
	struct line_row *rows;
	size_t nr;
	int built;
};

/* Build on first use; addr is in the module's Dwfl address space. */
int line_index_lookup(struct line_index *li, Dwfl_Module *mod, uint64_t addr,
		      const char **file, uint32_t *line);
void line_index_free(struct line_index *li);

#endif /* ALYS_CONV_LINE_INDEX_H */
