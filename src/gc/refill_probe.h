/* SPDX-License-Identifier: MIT */
/*
 * Where --sample refill probes a small-object free-list refill. Crystal's
 * GC_malloc and GC_malloc_atomic jump to GC_malloc_kind, which pops the
 * thread's free list for the size class and, when the list is empty, calls
 * GC_generic_malloc_many(class_bytes, kind, &list) to build a new one, then
 * pops it. The probe sits on the first instruction after that call that the
 * kernel emulates (a jcc in Debian's builds), reached only on return from
 * the refill. There, from the registers:
 *   fl_reg    still holds &list (the list the refill built: its length times
 *             the request is what the event stands for)
 *   size_reg  still holds GC_malloc_kind's first argument (bytes requested),
 *             or size_sp_off: the stack slot it was spilled to (clang)
 *   kind_reg  its second (0: pointer-free), or -1 when no register keeps it
 * All three are derived from the machine code and checked: a register
 * counts only if it holds the value on every path to the probe.
 */
#ifndef ALYS_REFILL_PROBE_H
#define ALYS_REFILL_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;

struct refill_probe {
	uint64_t func_vaddr;	/* GC_malloc_kind */
	uint64_t call_vaddr;	/* its call to GC_generic_malloc_many */
	uint64_t probe_vaddr;
	uint64_t probe_file_off;
	char insn[192];		/* the probed instruction, for -v */
	int fl_reg;		/* DWARF register numbers */
	int size_reg;
	int size_sp_off;	/* or where the stack holds it, from sp; -1: none */
	int kind_reg;
};

/* 0: derived; -1: not (why says what is missing). */
int refill_probe_derive(struct elf_file *ef, struct refill_probe *rp, char *why,
			size_t whylen);

#endif

