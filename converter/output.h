/* SPDX-License-Identifier: MIT */
/* The output formats; each writes one converted trace to an outbuf. */
#ifndef ALYS_CONV_OUTPUT_H
#define ALYS_CONV_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/outbuf.h"
#include "profile/output_options.h"
#include "profile/pprof.h"
#include "profile/model.h"
#include "profile/symbolize.h"
#include "profile/trace.h"

/* m has been built (model_build); m->t and m->sym are the trace. */
void write_json(struct model *m, struct outbuf *o, const struct output_options *opt);
void write_folded(struct model *m, struct outbuf *o, const struct output_options *opt);
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
