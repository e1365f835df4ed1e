// SPDX-License-Identifier: MIT
#include "sites.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "crystal_names.h"
#include "outbuf.h"
#include "profile.h"
#include "u64_table.h"
#include "util.h"

char *sites_name_stack(const struct trace *t, struct symbolizer *sym,
		       const struct trace_stack *st)
{
	char type[SITE_TYPE_MAX];
	const struct sym_frame *site = stack_site(t, sym, st, type, sizeof(type));
	struct outbuf mem;

	outbuf_init(&mem, -1);
	outbuf_str(&mem, site ? site->name : st->nr ? "[allocator only]" : "[stack lost]");
	/* As the report shows a site; without DWARF (diff), the name alone. */
	if (site && site->file) {
		outbuf_str(&mem, "  ");
		outbuf_str(&mem, base_name(site->file));
		if (site->line)
			outbuf_printf(&mem, ":%" PRIu32, site->line);
	}
	outbuf_char(&mem, '\0');
	for (char *p = mem.buf; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = '?';
	return mem.buf;
}

struct named {
	char *name;
	size_t stack;		/* index + 1; 0: events without stack */
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* site index of every stack (+1 slot for "no stack"), one site per name */
static uint32_t *assign_sites(const struct trace *t, struct symbolizer *sym,
			      struct site_table *st)
{
	struct named *v = xcalloc(t->nr_stacks + 1, sizeof(*v));
	uint32_t *site_of = xcalloc(t->nr_stacks + 1, sizeof(*site_of));
	size_t n = t->nr_stacks + 1;

	v[0].name = xmemdup_str("[stack lost]", 12);
	for (size_t s = 0; s < t->nr_stacks; s++) {
		v[s + 1].name = sites_name_stack(t, sym, &t->stacks[s]);
		v[s + 1].stack = s + 1;
	}
	qsort(v, n, sizeof(*v), by_name);
	st->sites = xcalloc(n, sizeof(*st->sites));
	for (size_t i = 0; i < n; i++) {
		if (!st->n || strcmp(st->sites[st->n - 1].name, v[i].name))
			st->sites[st->n++].name = v[i].name;
		else
			free(v[i].name);
		site_of[v[i].stack] = (uint32_t)st->n - 1;
	}
	free(v);
	return site_of;
}

static void snapshot(struct site_table *st, uint64_t ts)
{
	for (size_t i = 0; i < st->n; i++) {
		struct site *s = &st->sites[i];

		if (!s->allocs)
			continue;	/* not born yet */
		if (!s->snapshots++)
			s->first_live = s->live_bytes;
		else if (s->live_bytes > s->last_live)
			s->rises++;
		else if (s->live_bytes < s->last_live)
			s->falls++;
		s->last_live = s->live_bytes;
		if (s->live_bytes > s->peak_live)
			s->peak_live = s->live_bytes;
	}
	st->snapshots++;
	if (st->on_snapshot)
		st->on_snapshot(st, ts, st->arg);
}

static int by_tid(const void *a, const void *b)
{
	const struct thread_stat *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Per-thread totals and the age of what is live at the end. */
static void end_stats(const struct trace *t, struct site_table *st, const uint32_t *event_site,
		      const uint8_t *freed)
{
	struct u64_table idx;
	size_t cap = 0;

	u64_table_init(&idx);
	for (size_t i = 0; i < t->nr_events; i++) {
		const struct trace_event *e = &t->events[i];
		struct thread_stat *th;
		struct u64_slot *sl;

		if (e->kind == ALYS_KIND_FREE)
			continue;
		sl = u64_table_get(&idx, (uint64_t)e->tid + 1);
		if (!sl) {
			st->threads = grow_array(st->threads, &cap, st->nthreads + 1,
						 sizeof(*st->threads));
			memset(&st->threads[st->nthreads], 0, sizeof(st->threads[0]));
			st->threads[st->nthreads].tid = e->tid;
			u64_table_put(&idx, (uint64_t)e->tid + 1, st->nthreads++, 0);
			sl = u64_table_get(&idx, (uint64_t)e->tid + 1);
		}
		th = &st->threads[sl->a];
		th->allocs++;
		th->alloc_bytes += e->weight;
		if (!freed[i]) {
			struct site *s = &st->sites[event_site[i]];
			uint32_t age = st->last_gc > e->gc_no ? st->last_gc - e->gc_no : 0;

			th->live_bytes += (int64_t)e->weight;
			th->live_objs++;
			s->age_sum += age;
			if (age > s->age_max)
				s->age_max = age;
		}
	}
	u64_table_free(&idx);
	if (st->nthreads)
		qsort(st->threads, st->nthreads, sizeof(*st->threads), by_tid);
}

void sites_build(const struct trace *t, struct symbolizer *sym, struct site_table *st)
{
	sites_build_cb(t, sym, st, NULL, NULL);
}

void sites_build_cb(const struct trace *t, struct symbolizer *sym, struct site_table *st,
		    void (*on_snapshot)(const struct site_table *, uint64_t, void *), void *arg)
{
	uint32_t *site_of, *event_site;
	uint8_t *freed;
	size_t next_coll = 0;
	uint32_t last_gc = 0;
	uint64_t last_ts = t->hdr.start_ns;

	memset(st, 0, sizeof(*st));
	st->on_snapshot = on_snapshot;
	st->arg = arg;
	site_of = assign_sites(t, sym, st);
	event_site = xcalloc(t->nr_events ? t->nr_events : 1, sizeof(*event_site));
	freed = xcalloc(t->nr_events ? t->nr_events : 1, 1);
	for (size_t i = 0; i < t->nr_events; i++) {
		const struct trace_event *e = &t->events[i];

		/* Snapshots: after each collection read; without those, when
		 * allocations start carrying a new gc_no. */
		while (next_coll < t->nr_collections &&
		       t->collections[next_coll].first_event <= i) {
			snapshot(st, t->collections[next_coll].ts_ns);
			next_coll++;
		}
		if (!t->nr_collections && e->kind != ALYS_KIND_FREE && e->gc_no > last_gc) {
			if (last_gc)
				snapshot(st, e->ts_ns);
			last_gc = e->gc_no;
		}
		if (e->ts_ns > last_ts)
			last_ts = e->ts_ns;
		if (e->gc_no > st->last_gc && e->gc_no != UINT32_MAX)
			st->last_gc = e->gc_no;
		/* What this event ends: a freed or reallocated block. */
		if ((e->kind == ALYS_KIND_FREE || e->kind == ALYS_KIND_REALLOC) && e->prev_id &&
		    e->prev_id <= i) {
			const struct trace_event *p = &t->events[e->prev_id - 1];
			struct site *s = &st->sites[event_site[e->prev_id - 1]];

			if (p->kind != ALYS_KIND_FREE && !freed[e->prev_id - 1]) {
				freed[e->prev_id - 1] = 1;
				s->live_bytes -= (int64_t)p->weight;
				s->live_objs--;
				s->frees++;
			}
		}
		if (e->kind != ALYS_KIND_FREE) {
			struct site *s = &st->sites[site_of[e->stack]];

			event_site[i] = site_of[e->stack];
			s->allocs++;
			s->alloc_bytes += e->weight;
			s->live_bytes += (int64_t)e->weight;
			s->live_objs++;
		}
	}
	for (; next_coll < t->nr_collections; next_coll++) {
		snapshot(st, t->collections[next_coll].ts_ns);
		/* a collection read after the last event: the end comes after it */
		if (t->collections[next_coll].ts_ns > last_ts)
			last_ts = t->collections[next_coll].ts_ns;
	}
	for (size_t c = 0; c < t->nr_collections; c++)
		if (t->collections[c].gc_no > st->last_gc)
			st->last_gc = t->collections[c].gc_no;
	end_stats(t, st, event_site, freed);
	free(freed);
	/* The last event, as the last point of a timeline; not a collection. */
	if (on_snapshot)
		on_snapshot(st, last_ts, arg);
	free(event_site);
	free(site_of);
}

void sites_free(struct site_table *st)
{
	free(st->threads);
	for (size_t i = 0; i < st->n; i++)
		free(st->sites[i].name);
	free(st->sites);
	memset(st, 0, sizeof(*st));
}

static int name_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct site *)elem)->name);
}

const struct site *sites_find(const struct site_table *st, const char *name)
{
	/* assign_sites made them in name order */
	return st->n ? bsearch(name, st->sites, st->n, sizeof(*st->sites), name_cmp) : NULL;
}
