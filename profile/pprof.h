/* SPDX-License-Identifier: MIT */
/* pprof output (profile.proto, gzipped): alys_converter -f pprof and the
 * daemon's /debug/pprof endpoints write the same profile of a model. */
#ifndef ALYS_PPROF_H
#define ALYS_PPROF_H

#include "profile/model.h"
#include "profile/outbuf.h"
#include "profile/output_options.h"

/* m has been built (model_build, model_from_totals); m->t and m->sym are
 * the trace. */
void write_pprof(struct model *m, struct outbuf *o, const struct output_options *opt);
/* What pprof_encode wrote: the profile's size before compression (what
 * servers limit: Pyroscope refuses more than 4 MiB, and more than its rate
 * limit's 2 MiB burst in one go), its samples, and how many stacks
 * max_samples added up into "[other stacks]". */
struct pprof_counts {
	size_t bytes, samples, merged;
};
void pprof_encode(struct model *m, struct outbuf *o, const struct output_options *opt,
		  struct pprof_counts *out);

#endif /* ALYS_PPROF_H */
