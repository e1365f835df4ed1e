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

#include "output.h"
#include "profile.h"
#include "sites.h"
#include "util.h"

#define TOP_IN_USE 20
#define TOP_SUSPECTS 20

static int by_live(const void *a, const void *b)
{
	const struct site *x = *(const struct site *const *)a, *y = *(const struct site *const *)b;

	return x->live_bytes != y->live_bytes ? (x->live_bytes < y->live_bytes ? 1 : -1)
					      : strcmp(x->name, y->name);
}

/* How much a site grew between its first and last snapshot. */
static int64_t growth(const struct site *s)
{
	return s->last_live - s->first_live;
}

/* Rising in most intervals and grown overall: a leak suspect. */
static bool suspect(const struct site *s)
{
	return s->snapshots >= 3 && growth(s) > 0 && s->rises >= 2 && s->rises >= 2 * s->falls;
}

static int by_growth(const void *a, const void *b)
{
	const struct site *x = *(const struct site *const *)a, *y = *(const struct site *const *)b;

	if (growth(x) != growth(y))
		return growth(x) < growth(y) ? 1 : -1;
	if (x->rises != y->rises)
		return x->rises < y->rises ? 1 : -1;
	return strcmp(x->name, y->name);
}

void write_leaks(struct profile *p, struct outbuf *o, const struct output_options *opt)
{
	(void)opt;
	leaks_sections(p, o, true);
}

void leaks_sections(struct profile *p, struct outbuf *o, bool inuse_table)
{
	const struct trace *t = p->t;
	struct symbolizer *sym = p->sym;
	struct site_table st;
	const struct site **v;
	const char *mode = t->hdr.liveness.ptr ? t->hdr.liveness.ptr : "off";
	size_t n = 0;

	sites_build(t, sym, &st);
	if (t->end.liveness.ptr)
		mode = t->end.liveness.ptr;
	outbuf_printf(o, "liveness: %s; %zu collections read; %u snapshots of live bytes\n", mode,
		      t->nr_collections, st.snapshots);
	if (!strcmp(mode, "off"))
		outbuf_str(o, "note: this trace has no inferred frees (traced with --no-liveness or "
			   "by an older alys-bpf): every block the program did not GC_free looks live\n");
	else if (!strcmp(mode, "reuse"))
		outbuf_str(o, "note: frees were inferred from address reuse only: blocks never "
			   "handed out again look live, and deaths are seen late\n");

	v = xcalloc(st.n ? st.n : 1, sizeof(*v));
	for (size_t i = 0; i < st.n; i++)
		if (st.sites[i].allocs)
			v[n++] = &st.sites[i];
	qsort(v, n, sizeof(*v), by_live);
	if (inuse_table) {
		outbuf_printf(o, "\nIn use at the end, by site (top %d):\n", TOP_IN_USE);
		outbuf_printf(o, "%14s %10s %14s %8s %8s  %s\n", "live_bytes", "objects",
			      "alloc_bytes", "age_avg", "age_max", "site");
	}
	for (size_t i = 0; inuse_table && i < n && i < TOP_IN_USE && v[i]->live_bytes > 0; i++)
		outbuf_printf(o, "%14" PRId64 " %10" PRId64 " %14" PRIu64 " %8.1f %8u  %s\n", v[i]->live_bytes,
			      v[i]->live_objs, v[i]->alloc_bytes,
			      v[i]->live_objs > 0 ? (double)v[i]->age_sum / (double)v[i]->live_objs : 0.0,
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
		outbuf_printf(o, "%4zu %+14" PRId64 " %14" PRId64 " %9s  %s\n", ++rank, growth(v[i]),
			      v[i]->live_bytes, rising, v[i]->name);
	}
	outbuf_printf(o, "\nBy allocating thread:\n%10s %12s %14s %14s %10s\n", "tid", "allocs",
		      "alloc_bytes", "live_bytes", "objects");
	for (size_t i = 0; i < st.nthreads; i++)
		outbuf_printf(o, "%10u %12" PRIu64 " %14" PRIu64 " %14" PRId64 " %10" PRId64 "\n",
			      st.threads[i].tid, st.threads[i].allocs, st.threads[i].alloc_bytes,
			      st.threads[i].live_bytes, st.threads[i].live_objs);
	free(v);
	sites_free(&st);
}
