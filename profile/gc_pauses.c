// SPDX-License-Identifier: MIT
#include "profile/gc_pauses.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

/* Frames looked at for GC_gcollect: it is a few calls above
 * GC_stop_world (GC_stopped_mark, GC_try_to_collect_inner, ...). */
#define EXPLICIT_DEPTH 16

static bool asks_collection(const char *symbol)
{
	return !strcmp(symbol, "GC_gcollect") || !strcmp(symbol, "GC_gcollect_and_unmap") ||
	       !strcmp(symbol, "GC_try_to_collect");
}

static bool is_explicit(struct model *m, const struct trace_pause *p)
{
	const struct trace *t = m->t;
	struct frame_iter it;
	uint64_t ip;

	if (!p->stack)
		return false;
	frames_begin(&it, t, &t->stacks[p->stack - 1], EXPLICIT_DEPTH);
	for (uint32_t i = 0; frames_next(&it, &ip); i++) {
		const struct sym_entry *e = symbolizer_entry(m->sym, symbolizer_resolve(m->sym, ip, i));

		for (uint32_t k = 0; e && k < e->nr_frames; k++)
			if (e->frames[k].symbol && asks_collection(e->frames[k].symbol))
				return true;
	}
	return false;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t gc_pauses_quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)ceil(q * (double)n);
	return sorted[(rank ? rank : 1) - 1];
}

void gc_pauses_summarize(struct model *m, struct gc_pause_summary *s)
{
	const struct trace *t = m->t;
	uint64_t *ns;

	memset(s, 0, sizeof(*s));
	s->n = t->nr_pauses;
	s->rows = xcalloc(s->n + 1, sizeof(*s->rows));
	ns = xcalloc(s->n + 1, sizeof(*ns));
	for (size_t i = 0; i < s->n; i++) {
		struct gc_pause_row *r = &s->rows[i];

		r->p = &t->pauses[i];
		r->ns = r->p->start_ns - r->p->stop_ns;
		r->collection_ns = r->p->end_ns ? r->p->end_ns - r->p->begin_ns : 0;
		if (r->collection_ns) {
			s->n_collections++;
			s->collection_ns += r->collection_ns;
			s->collection_pause_ns += r->ns;
		}
		r->bucket = trace_bucket(t, r->p->stack, ALYS_KIND_MALLOC);
		r->explicit_gc = is_explicit(m, r->p);
		s->n_explicit += r->explicit_gc;
		s->total_ns += r->ns;
		ns[i] = r->ns;
	}
	qsort(ns, s->n, sizeof(*ns), by_u64);
	s->max_ns = s->n ? ns[s->n - 1] : 0;
	s->p50_ns = gc_pauses_quantile(ns, s->n, 0.50);
	s->p90_ns = gc_pauses_quantile(ns, s->n, 0.90);
	s->p99_ns = gc_pauses_quantile(ns, s->n, 0.99);
	free(ns);
}

void gc_pauses_free(struct gc_pause_summary *s)
{
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

void gc_pauses_as_buckets(struct model *m, const struct gc_pause_summary *s)
{
	for (size_t b = 0; b < m->nr_buckets; b++)
		memset(&m->buckets[b].s, 0, sizeof(m->buckets[b].s));
	for (size_t i = 0; i < s->n; i++) {
		struct alloc_stats *st = &m->buckets[s->rows[i].bucket].s;

		st->alloc_objects++;
		st->alloc_space += s->rows[i].ns;
	}
}
