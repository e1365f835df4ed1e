/* SPDX-License-Identifier: MIT */
/* The output formats; each writes one converted trace to an outbuf. */
#ifndef ALYS_CONV_OUTPUT_H
#define ALYS_CONV_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "outbuf.h"
#include "symbolize.h"
#include "trace.h"

enum folded_value {
	VALUE_COUNT,	/* number of allocation events */
	VALUE_BYTES,	/* sum of their weights */
};

struct output_options {
	bool indent;			/* json: pretty-print */
	uint32_t depth;			/* frames kept per stack, innermost first; 0: all */
	enum folded_value value;	/* folded-stacks only */
};

void write_json(const struct trace *t, struct symbolizer *sym,
		struct outbuf *o, const struct output_options *opt);
void write_folded(const struct trace *t, struct symbolizer *sym,
		  struct outbuf *o, const struct output_options *opt);
/* out_leaks.c: in-use bytes by site at the end, leak suspects. */
void write_leaks(const struct trace *t, struct symbolizer *sym,
		 struct outbuf *o, const struct output_options *opt);
/* out_timeline.c: SVG chart of allocated and live bytes over time. */
void write_timeline(const struct trace *t, struct symbolizer *sym,
		    struct outbuf *o, const struct output_options *opt);

#endif /* ALYS_CONV_OUTPUT_H */
