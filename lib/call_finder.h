/* SPDX-License-Identifier: MIT */
/*
 * The calls a program's code makes to named functions: found by their
 * encoding in .text (`e8 rel32` to the function or its PLT stub, `ff 15`
 * through its GOT slot), far faster than disassembling everything. The
 * converter finds allocation calls with it (type ids), the daemon the
 * calls that push fiber stacks (heap snapshots).
 */
#ifndef ALYS_CALL_FINDER_H
#define ALYS_CALL_FINDER_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/elf_file.h"
#include "lib/u64_table.h"

struct call_finder {
	struct elf_file *ef;
	csh cs;				/* x86-64, with details */
	cs_insn *in;			/* scratch instruction */
	const char *const *names;
	size_t nr_names;
	uint64_t *entries;		/* the functions' entry points and PLT stubs, sorted */
	size_t nr_entries;
	struct u64_table slot_cache;	/* GOT slot + 1 -> 1 named, 2 not */
	const uint8_t *text_code;	/* .text */
	uint64_t text;
	size_t text_size;
};

/* 0, or -1 when ef has no .text or capstone cannot be opened. */
int call_finder_init(struct call_finder *cf, struct elf_file *ef, const char *const *names,
		     size_t nr_names);
void call_finder_free(struct call_finder *cf);

/* Calls fn(arg, call, ret) for each call found (its address and its return
 * address), in address order, until fn returns non-zero. */
void call_finder_each(struct call_finder *cf, int (*fn)(void *arg, uint64_t call, uint64_t ret),
		      void *arg);

/* Whether the decoded call instruction in reaches one of the names. */
bool call_finder_reaches(struct call_finder *cf, const cs_insn *in);

#endif
