/* SPDX-License-Identifier: MIT */
/*
 * Symbolization of trace addresses with elfutils libdwfl, from the files
 * (the converter, or the daemon while the program runs).
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
#include <sys/types.h>

#include "profile/trace.h"

struct sym_frame {
	const char *name;	/* function, or "[file+0xoff]" / "0xaddr"; never NULL;
				 * a Crystal method as lib/crystal_display.h shows it */
	const char *symbol;	/* the function as the binary names it: what rules
				 * that read names (the site rule) are fed */
	const char *file;	/* source file, NULL when unknown */
	uint32_t line;		/* 0 when unknown */
	bool resolved;		/* name came from a symbol table */
};

/*
 * What one stack address stands for, innermost first: the functions inlined
 * at the address (innermost first), then the function that holds the code,
 * named from the symbol table, last. nr_frames is 1 when nothing is inlined
 * there. An inlined frame's file:line is where it was executing (the
 * innermost) or where it called the next inner one; the same goes for the
 * last frame.
 */
struct sym_entry {
	uint64_t ip;
	uint32_t nr_frames;
	const struct sym_frame *frames;
};

struct symbolizer;

struct symbolizer_options {
	bool want_dwarf;	/* file, line and inlined frames (reads DWARF) */
	bool no_symbols;	/* resolve nothing: every frame as [file+0xoffset] */
	const char *debug_dir;	/* also look for files by build id here, or NULL */
	const char *kept_dir;	/* and here: the trace's kept files (TRACE.debug, the
				 * tracer's --debug-dir), or NULL */
	pid_t live_pid;		/* the traced process, running: its files are
				 * opened as it mapped them (target_file.h) */
	bool full_names;	/* name = symbol: no display rule */
};

struct symbolizer *symbolizer_new(const struct trace *t, const struct symbolizer_options *opt);
void symbolizer_free(struct symbolizer *s);
/* TRACE.debug, where alys-bpf keeps the files of trace_path that its
 * machine had not by their mapped paths, if that directory exists: to be
 * freed; NULL otherwise. */
char *symbolizer_kept_dir(const char *trace_path);
/* The trace has more mappings than when s was made (a live trace). */
void symbolizer_maps_grew(struct symbolizer *s);

/*
 * The entry index for ip. depth is the frame's position in its stack:
 * frame 0 is the exact ip, deeper frames are return addresses and are
 * looked up at ip - 1 (inside the call instruction).
 */
uint32_t symbolizer_resolve(struct symbolizer *s, uint64_t ip, uint32_t depth);
const struct sym_entry *symbolizer_entry(const struct symbolizer *s, uint32_t index);
uint32_t symbolizer_nr_entries(const struct symbolizer *s);

/* Whether names for trace mapping map_index come from a symbol table. */
bool symbolizer_mapping_resolved(struct symbolizer *s, size_t map_index);
/* The file read for trace mapping map_index (its path, the running
 * process's, or a copy under a debug directory, checked by build id), or
 * NULL when there is none. Valid while s is. */
const char *symbolizer_mapping_file(struct symbolizer *s, size_t map_index);

#endif /* ALYS_CONV_SYMBOLIZE_H */
