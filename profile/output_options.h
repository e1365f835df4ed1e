/* SPDX-License-Identifier: MIT */
/* What every output format is asked for: alys_converter's options, and the
 * daemon's live profile (pprof only). */
#ifndef ALYS_OUTPUT_OPTIONS_H
#define ALYS_OUTPUT_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

enum value_kind {
	VALUE_DEFAULT,	/* the format's own default */
	VALUE_COUNT,	/* allocated objects (weight / size per event) */
	VALUE_BYTES,	/* allocated bytes (sum of weights) */
};

struct output_options {
	bool indent;			/* json: pretty-print */
	bool inline_stacks;		/* json: frames in every event, no stacks table */
	bool markdown;			/* report: Markdown instead of plain text */
	uint32_t depth;			/* frames kept per stack, innermost first; 0: all */
	uint64_t min_bytes;		/* aggregated formats: drop stacks/sites below */
	enum value_kind value;		/* folded-stacks, flamegraph */
	bool keep_allocator_frames;	/* into the model: model_first_kept trims nothing */
	uint32_t limit;			/* heap-graph: objects whose paths are drawn; 0: 10 */
	bool live_view;			/* --at, /debug/pprof/heap: what is live first */
	/* pprof: when the profile starts and how long it covers (0: the
	 * trace's start and length); the daemon's live ones */
	uint64_t time_unix_ns, duration_ns;
	/* pprof: which sample types (a pushed window's allocations and its
	 * in-use snapshot go as two profiles), and at most this many samples
	 * (0: all), the smallest stacks added up as one "[other stacks]" */
	enum pprof_values {
		PPROF_ALL, PPROF_ALLOC, PPROF_INUSE,
		PPROF_PAUSES,	/* gc_pauses_as_buckets: the buckets hold pauses */
	} pprof_values;
	uint32_t max_samples;
	bool instant;			/* pprof: a moment, no duration at all */
};

#endif /* ALYS_OUTPUT_OPTIONS_H */
