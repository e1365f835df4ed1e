/* SPDX-License-Identifier: MIT */
/*
 * The rows of one FDE from its call-frame instructions, for the common
 * subset compilers emit on x86-64: what unwind_table.c would get from libdw
 * one dwarf_cfi_addrframe call a row (each a tree search of the section's
 * FDEs and the FDE's instructions run again from its start), in one pass.
 * Anything else (expressions, set_loc, signal frames, a rule left to the
 * ABI's defaults where libdw would apply them) is left to libdw: the
 * caller then gets 1 and no row.
 */
#ifndef ALYS_CFA_PROGRAM_H
#define ALYS_CFA_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "alys_unwind.h"

struct cfa_cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	const uint8_t *init, *init_end;	/* initial instructions */
};

/* A row's rules hold for [start, end); non-zero stops the walk (returned). */
typedef int (*cfa_row_fn)(uint64_t start, uint64_t end, const struct alys_unwind_row *r,
			  void *arg);

/* The rows of [lo, hi), the FDE's instructions [insns, end) run after the
 * CIE's from lo. Returns 0, 1 when libdw must do it (nothing emitted), or
 * fn's non-zero result. */
int cfa_program_rows(const struct cfa_cie *cie, const uint8_t *insns, const uint8_t *end,
		     uint64_t lo, uint64_t hi, cfa_row_fn fn, void *arg);

#endif /* ALYS_CFA_PROGRAM_H */
