/* SPDX-License-Identifier: MIT */
/*
 * Address -> chain of inlined calls, from DWARF.
 *
 * libdw's own address lookup (dwfl_module_addrdie, dwarf_getscopes) starts
 * from a compile unit found by address, and Crystal's debug builds describe
 * no address ranges on their compile units (see line_index.h). So this keeps
 * one sorted array of every subprogram's code ranges per module, and walks
 * the DW_TAG_inlined_subroutine children of the subprogram holding the
 * address.
 */
#ifndef ALYS_CONV_INLINE_INDEX_H
#define ALYS_CONV_INLINE_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct subprog_range;

struct outline_copy;

struct inline_index {
	struct subprog_range *ranges;
	size_t nr;
	struct outline_copy *outlines;	/* by origin */
	size_t nr_outlines;
	int built;
};

/* One inlined call at an address. Strings are owned by libdw. */
struct inline_call {
	const char *name;	/* the inlined function, as DWARF names it */
	const char *decl_file;	/* where that function is defined, or NULL */
	uint32_t decl_line;
	const char *call_file;	/* where it was called from (in its caller), or NULL */
	uint32_t call_line;
	uint32_t call_column;	/* where the call expression starts, receiver included */
	/* Where the same function (the same abstract origin: one
	 * instantiation) also has a copy of its own, whose symbol names it
	 * whole (Crystal's DWARF names an inlined function by its bare
	 * method name, "push"): its entry in the Dwfl address space, 0 if
	 * none. */
	uint64_t outline_addr;
};

#define INLINE_MAX_DEPTH 32

/*
 * Fill calls[] with the inlined calls active at addr (in the module's Dwfl
 * address space), innermost first; returns how many (0 when the address is
 * in no inlined code, or the module has no DWARF).
 */
int inline_index_lookup(struct inline_index *ix, Dwfl_Module *mod, uint64_t addr,
			struct inline_call *calls, int max);
void inline_index_free(struct inline_index *ix);

#endif /* ALYS_CONV_INLINE_INDEX_H */
