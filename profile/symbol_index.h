/* SPDX-License-Identifier: MIT */
/*
 * Address -> function symbol for one libdwfl module, by binary search.
 *
 * dwfl_module_addrname() (elfutils 0.188) scans the whole symbol table on
 * every call: with a Crystal binary's tens of thousands of symbols and tens
 * of thousands of distinct stack addresses that is most of a conversion.
 * This reads the table once (the same one libdwfl uses: .symtab, else
 * .dynsym) into a sorted array.
 */
#ifndef ALYS_CONV_SYMBOL_INDEX_H
#define ALYS_CONV_SYMBOL_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct symbol_entry;
struct crystal_namer;

struct symbol_index {
	struct symbol_entry *syms;
	size_t nr;
	int built;
	struct crystal_namer *namer;	/* the display names of its symbols */
};

/*
 * The function symbol holding addr (in the module's Dwfl address space),
 * or NULL when the table does not say for sure (the caller then asks
 * libdwfl). The name is owned by libelf.
 */
const char *symbol_index_lookup(struct symbol_index *ix, Dwfl_Module *mod, uint64_t addr);
/* The function symbol starting exactly at addr (a call's target), or NULL. */
const char *symbol_index_at(struct symbol_index *ix, Dwfl_Module *mod, uint64_t addr);
void symbol_index_free(struct symbol_index *ix);

/* The module's symbols' display names, told apart (lib/crystal_display.h). */
struct crystal_namer *symbol_index_namer(struct symbol_index *ix, Dwfl_Module *mod);

#endif /* ALYS_CONV_SYMBOL_INDEX_H */
