/* SPDX-License-Identifier: MIT */
/* The output formats; each writes one converted trace to an outbuf. */
#ifndef ALYS_CONV_OUTPUT_H
#define ALYS_CONV_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "outbuf.h"
#include "model.h"
#include "symbolize.h"
#include "trace.h"

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
	bool live_view;			/* --at: the state at a time, what is live first */
};

/* m has been built (model_build); m->t and m->sym are the trace. */
void write_json(struct model *m, struct outbuf *o, const struct output_options *opt);
void write_folded(struct model *m, struct outbuf *o, const struct output_options *opt);
void write_pprof(struct model *m, struct outbuf *o, const struct output_options *opt);
void write_flamegraph(struct model *m, struct outbuf *o, const struct output_options *opt);
void write_report(struct model *m, struct outbuf *o, const struct output_options *opt);
/* out_leaks.c: in-use bytes by site at the end, leak suspects. */
void write_leaks(struct model *m, struct outbuf *o, const struct output_options *opt);
/* The same, without the in-use table when the caller has one (the report). */
void leaks_sections(const struct model *m, struct outbuf *o, bool inuse_table);
/* out_timeline.c: SVG chart of allocated and live bytes over time. */
void write_timeline(struct model *m, struct outbuf *o, const struct output_options *opt);

/* out_heap.c: a heap snapshot by type and retained bytes (heap.h). */
void write_heap(struct model *m, struct outbuf *o, const struct output_options *opt);

/* The paths from roots to objects of --type as a mermaid flowchart. */
void write_heap_graph(struct model *m, struct outbuf *o, const struct output_options *opt);

/* out_census.c: live objects by type id from --census heap walks. */
void write_census(struct model *m, struct outbuf *o, const struct output_options *opt);

#endif /* ALYS_CONV_OUTPUT_H */
