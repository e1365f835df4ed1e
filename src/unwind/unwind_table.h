/* SPDX-License-Identifier: MIT */
/*
 * Compact unwind tables (include/alys_unwind.h) built from an ELF file's
 * .eh_frame, with .debug_frame (same file) filling PCs .eh_frame leaves out.
 *
 * A table is a sorted array of rows; row i covers file virtual addresses
 * [rows[i].pc, rows[i+1].pc).  The last row is always ALYS_CFA_END, and
 * every gap between FDEs starts with an ALYS_CFA_END row.  Consecutive rows
 * with identical rules are merged.  Addresses are ELF virtual addresses
 * (st_value space): runtime pc - load bias.
 *
 * Per-row mapping from the CFI (libdw's view of it):
 *   CFA = rsp + N                    -> ALYS_CFA_RSP, cfa_offset N
 *   CFA = rbp + N                    -> ALYS_CFA_RBP, cfa_offset N
 *   the .plt expression              -> ALYS_CFA_PLT
 *     (breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus)
 *   return address (r16) undefined   -> ALYS_CFA_OUTERMOST
 *   anything else, a return address
 *   not saved at CFA-8, or a signal
 *   frame ('S' augmentation)         -> ALYS_CFA_UNSUPPORTED
 *   rbp same value / unspecified     -> ALYS_RBP_SAME
 *   rbp saved at CFA+N (N fits s16)  -> ALYS_RBP_OFFSET, rbp_offset N
 *   rbp undefined, in a register,
 *   or an expression                 -> ALYS_RBP_UNSUPPORTED
 * Rows of type END/OUTERMOST/UNSUPPORTED have offsets 0 and ALYS_RBP_SAME.
 */
#ifndef ALYS_UNWIND_TABLE_H
#define ALYS_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "alys_unwind.h"

#define ALYS_UNWIND_MAX_SEGS 32

/* A PT_LOAD segment, to turn a runtime mapping into a load bias. */
struct alys_unwind_seg {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;			/* PF_X | PF_W | PF_R */
};

struct alys_unwind_stats {
	size_t fde_eh;			/* FDEs used from .eh_frame */
	size_t fde_interpreted;		/* of those, rows from cfa_program.c, not libdw */
	size_t fde_debug;		/* FDEs from .debug_frame that added PCs */
	size_t fde_skipped;		/* empty, outside any executable segment, or
					 * undecodable */
	size_t rows_unsupported;	/* rows (after merging) of each kind */
	size_t rows_plt;
	size_t rows_outermost;
	size_t rows_rbp_unsupported;
	size_t cfi_errors;		/* addresses libdw could not give a frame for
					 * (emitted as UNSUPPORTED) */
};

struct alys_unwind_table {
	struct alys_unwind_row *rows;
	size_t nrows;
	struct alys_unwind_seg segs[ALYS_UNWIND_MAX_SEGS];
	size_t nsegs;
	int is_dyn;			/* ET_DYN (PIE or shared object) */
	struct alys_unwind_stats stats;
};

/* Builds the table for the ELF file at path.  Returns 0 on success, -1 with
 * a message naming the file in err.  A file without any CFI is not an error:
 * it gets a table holding one END row at pc 0.  Files whose PT_LOAD segments
 * reach past 4 GiB are rejected (rows hold 32-bit pcs). */
int alys_unwind_table_build(const char *path, struct alys_unwind_table *out,
			    char *err, size_t errlen);
void alys_unwind_table_free(struct alys_unwind_table *t);

/* The row covering file vaddr pc, or NULL when pc is below the first row
 * (then no FDE covers it either).  Binary search. */
const struct alys_unwind_row *alys_unwind_find_row(const struct alys_unwind_table *t,
						   uint64_t pc);

/* The load bias of a mapping of this file [map_start, ...) at file offset
 * map_offset (as in /proc/PID/maps): runtime address = bias + file vaddr.
 * Returns 0, or -1 when no PT_LOAD segment holds map_offset. */
int alys_unwind_table_bias(const struct alys_unwind_table *t, uint64_t map_start,
			   uint64_t map_offset, uint64_t *bias);

const char *alys_cfa_type_name(unsigned int cfa_type);

#endif
