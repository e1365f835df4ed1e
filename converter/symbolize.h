/* SPDX-License-Identifier: MIT */
/*
 * Offline symbolization of trace addresses with elfutils libdwfl.
 *
 * Each file named by a mapping record is opened from this machine, checked
 * against the build id recorded in the trace, and reported to its own Dwfl at
 * the load bias the mapping implies. Every distinct address is looked up once;
 * callers get a small dense index per address so that they can cache their
 * own rendering of it (the JSON writer keeps one text fragment per address).
 */
#ifndef ALYS_CONV_SYMBOLIZE_H
#define ALYS_CONV_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

struct sym_frame {
	const char *name;	/* function, or "[file+0xoff]" / "0xaddr"; never NULL */
	const char *file;	/* source file, NULL when unknown */
	uint32_t line;		/* 0 when unknown */
	bool resolved;		/* name came from a symbol table */
};

/*
 * What one stack address stands for, innermost first. Today nr_frames is
 * always 1; inlined callers will be added as further frames, so callers
 * should loop over frames[] rather than assume one.
 */
struct sym_entry {
	uint64_t ip;
	uint32_t nr_frames;
	const struct sym_frame *frames;
};

struct symbolizer;

/* want_lines: also look up file and line (needs DWARF, slower). */
struct symbolizer *symbolizer_new(const struct trace *t, bool want_lines);
void symbolizer_free(struct symbolizer *s);

/*
 * The entry index for ip. depth is the frame's position in its stack:
 * frame 0 is the exact ip, deeper frames are return addresses and are
 * looked up at ip - 1 (inside the call instruction).
 */
uint32_t symbolizer_resolve(struct symbolizer *s, uint64_t ip, uint32_t depth);
const struct sym_entry *symbolizer_entry(const struct symbolizer *s, uint32_t index);
uint32_t symbolizer_nr_entries(const struct symbolizer *s);

#endif /* ALYS_CONV_SYMBOLIZE_H */
