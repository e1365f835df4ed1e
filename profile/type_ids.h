/* SPDX-License-Identifier: MIT */
/*
 * Crystal type ids named from the program's machine code, with no
 * allocation probe. Crystal writes a reference object's type id (32 bits)
 * at its offset 0 right after allocating it, as a constant in the code:
 *
 *   call __crystal_malloc64 ; ... memset ... ; movl $0x40,(%rcx)   (debug:
 *                                              through stack slots)
 *   call GC_malloc@plt ; movq $0xaa,(%rax)     (--release, inlined)
 *
 * The function or inlined frame holding that store is a constructor of the
 * type (T::new, T.allocate): its name names the id. Since Crystal 1.16 a
 * build of several modules (not --release) loads the id from a constant
 * "T:type_id" instead, and the symbol table names every id. The census and
 * the report use these names.
 */
#ifndef ALYS_CONV_TYPE_IDS_H
#define ALYS_CONV_TYPE_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/str_table.h"
#include "profile/symbolize.h"
#include "profile/trace.h"
#include "lib/u64_table.h"

struct type_ids {
	struct u64_table by_id;		/* id + 1 -> name index (a) */
	struct u64_table by_call;	/* return address of a naming allocation
					 * call (trace addresses) -> name index */
	struct str_table names;
	size_t allocations;		/* allocation calls found in the code */
	size_t stores;			/* ... followed by a type id store */
	size_t named;			/* distinct ids with a name */
};

/*
 * Scan the code of the trace's program (the mappings of the executable
 * hdr.exe names; each file checked against the trace's build id) and name
 * every type id stored after an allocation call. Files that cannot be read
 * leave their ids unnamed.
 */
void type_ids_scan(struct type_ids *ti, const struct trace *t, struct symbolizer *sym);
void type_ids_free(struct type_ids *ti);

/* The name of type id, or NULL. */
const char *type_ids_name(const struct type_ids *ti, uint32_t id);

/* The type an allocation call returning to ret (a trace address: a stack's
 * return address) constructs, or NULL. */
const char *type_ids_call(const struct type_ids *ti, uint64_t ret);

#endif /* ALYS_CONV_TYPE_IDS_H */
