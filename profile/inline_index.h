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
#include <stddef.h>
#include <stdint.h>

#include "lib/u64_table.h"

struct subprog_range;

struct outline_copy;

struct inline_index {
	struct subprog_range *ranges;
	size_t nr;
	struct outline_copy *outlines;	/* by origin */
	size_t nr_outlines;
	int built;
	/* the out-of-line calls of each inlined call looked at: DIE + 1 ->
	 * (first in callees, how many) */
	struct u64_table calls_of;
	uint64_t *callees;
	size_t nr_callees, cap_callees;
	size_t cs;		/* capstone's handle (a csh), 0 before the first */
	int cs_failed;
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
	uint64_t die;		/* its DW_TAG_inlined_subroutine */
};

#define INLINE_MAX_DEPTH 32

/*
 * Fill calls[] with the inlined calls active at addr (in the module's Dwfl
 * address space), innermost first; returns how many (0 when the address is
 * in no inlined code, or the module has no DWARF).
 */
int inline_index_lookup(struct inline_index *ix, Dwfl_Module *mod, uint64_t addr,
			struct inline_call *calls, int max);

/*
 * The functions an inlined call's own code (not its inlined callees') calls
 * or jumps to: their entry points in the Dwfl address space, in code order,
 * each once; sets *targets to them (owned by ix, valid until the next call)
 * and returns how many. An instance method it calls on the same type names
 * the instantiation the DWARF leaves out.
 */
size_t inline_index_callees(struct inline_index *ix, Dwfl_Module *mod,
			    const struct inline_call *call, const uint64_t **targets);
void inline_index_free(struct inline_index *ix);

#endif /* ALYS_CONV_INLINE_INDEX_H */
