// SPDX-License-Identifier: MIT
/*
 * -f leaks: what holds memory at the end of the trace (with the age of
 * those blocks in collections), which sites' live bytes keep growing from
 * one collection to the next (leak suspects), and bytes by thread.
 * Needs the frees the tracer inferred (header liveness "marks" or "reuse");
 * without them every block looks live and the report says so.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/output.h"
#include "profile/model.h"
#include "lib/util.h"

#define TOP_IN_USE 20
#define TOP_SUSPECTS 20

static int by_live(const void *a, const void *b)
{
	const struct model_site *x = *(const struct model_site *const *)a;
	const struct model_site *y = *(const struct model_site *const *)b;

	if (x->s.inuse_space != y->s.inuse_space)
		return x->s.inuse_space < y->s.inuse_space ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* How much a site grew between its first and last snapshot. */
static int64_t growth(const struct model_site *s)
{
	return (int64_t)(s->last_live - s->first_live);
}

/* Rising in most intervals and grown overall: a leak suspect. */
static bool suspect(const struct model_site *s)
{
	return s->snapshots >= 3 && growth(s) > 0 && s->rises >= 2 && s->rises >= 2 * s->falls;
}

static int by_growth(const void *a, const void *b)
{
	const struct model_site *x = *(const struct model_site *const *)a;
	const struct model_site *y = *(const struct model_site *const *)b;

	if (growth(x) != growth(y))
		return growth(x) < growth(y) ? 1 : -1;
	if (x->rises != y->rises)
		return x->rises < y->rises ? 1 : -1;
	return strcmp(x->name, y->name);
}

void write_leaks(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	(void)opt;
	leaks_sections(m, o, true);
}

void leaks_sections(const struct model *m, struct outbuf *o, bool inuse_table)
{
	const struct trace *t = m->t;
	const struct model_site **v;
	size_t n = 0;

	outbuf_printf(o, "liveness: %s; %zu collections read; %u snapshots of live bytes\n",
		      trace_liveness_name(t->liveness), t->nr_collections, m->collection_snaps);
	if (t->liveness == TRACE_LIVENESS_OFF)
		outbuf_str(o, "note: this trace has no inferred frees (traced with --no-liveness or "
			   "by an older alys-bpf): every block the program did not GC_free looks live\n");
	else if (t->liveness == TRACE_LIVENESS_REUSE)
		outbuf_str(o, "note: frees were inferred from address reuse only: blocks never "
			   "handed out again look live, and deaths are seen late\n");

	v = xcalloc(m->nr_sites ? m->nr_sites : 1, sizeof(*v));
	for (size_t i = 0; i < m->nr_sites; i++)
		if (m->sites[i].allocs)
			v[n++] = &m->sites[i];
	qsort(v, n, sizeof(*v), by_live);
	if (inuse_table) {
		outbuf_printf(o, "\nIn use at the end, by site (top %d):\n", TOP_IN_USE);
		outbuf_printf(o, "%14s %10s %14s %8s %8s  %s\n", "live_bytes", "objects",
			      "alloc_bytes", "age_avg", "age_max", "site");
	}
	for (size_t i = 0; inuse_table && i < n && i < TOP_IN_USE && v[i]->s.inuse_space > 0; i++)
		outbuf_printf(o, "%14" PRIu64 " %10" PRIu64 " %14" PRIu64 " %8.1f %8u  %s\n",
			      v[i]->s.inuse_space, v[i]->s.inuse_objects, v[i]->s.alloc_space,
			      v[i]->s.inuse_objects ?
			      (double)v[i]->age_sum / (double)v[i]->s.inuse_objects : 0.0,
			      v[i]->age_max, v[i]->name);

	qsort(v, n, sizeof(*v), by_growth);
	outbuf_printf(o, "\nLeak suspects: sites whose live bytes grew across collections (top %d):\n",
		      TOP_SUSPECTS);
	outbuf_printf(o, "%4s %14s %14s %9s  %s\n", "rank", "growth_bytes", "live_bytes", "rising", "site");
	for (size_t i = 0, rank = 0; i < n && rank < TOP_SUSPECTS; i++) {
		char rising[32];

		if (!suspect(v[i]))
			continue;
		snprintf(rising, sizeof(rising), "%u/%u", v[i]->rises, v[i]->snapshots - 1);
		outbuf_printf(o, "%4zu %+14" PRId64 " %14" PRIu64 " %9s  %s\n", ++rank, growth(v[i]),
			      v[i]->s.inuse_space, rising, v[i]->name);
	}
	outbuf_printf(o, "\nBy allocating thread:\n%10s %12s %14s %14s %10s\n", "tid", "allocs",
		      "alloc_bytes", "live_bytes", "objects");
	for (size_t i = 0; i < m->nr_threads; i++)
		outbuf_printf(o, "%10u %12" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10" PRIu64 "\n",
			      m->threads[i].tid, m->threads[i].allocs, m->threads[i].alloc_space,
			      m->threads[i].inuse_space, m->threads[i].inuse_objects);
	free(v);
}
