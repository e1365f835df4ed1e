// SPDX-License-Identifier: MIT
#include "profile/model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crystal_names.h"
#include "profile/outbuf.h"
#include "profile/progress.h"
#include "lib/u64_table.h"
#include "lib/util.h"

const char *kind_function(unsigned int kind)
{
	switch (kind) {
	case ALYS_KIND_MALLOC: return "GC_malloc";
	case ALYS_KIND_MALLOC_ATOMIC: return "GC_malloc_atomic";
	case ALYS_KIND_REALLOC: return "GC_realloc";
	case ALYS_KIND_FREE: return "GC_free";
	}
	return "GC_?";
}

size_t model_bucket_of(const struct model *m, const struct trace_event *e)
{
	return trace_bucket(m->t, e->stack, e->kind);
}

/* ---- classification: each stack's site and type, once ---- */

/* Frame k (flattened, innermost first, whole stack) of a stack. */
struct frame_walk {
	struct symbolizer *sym;
	struct frame_iter it;
	const struct sym_entry *e;	/* of address i */
	uint32_t i, k;
};

static const struct sym_frame *next_frame(struct frame_walk *w)
{
	uint64_t ip;

	for (;;) {
		if (w->e && w->k < w->e->nr_frames)
			return &w->e->frames[w->k++];
		if (!frames_next(&w->it, &ip))
			return NULL;
		w->e = symbolizer_entry(w->sym, symbolizer_resolve(w->sym, ip, w->i++));
		w->k = 0;
	}
}

/* The site frame of a stack by the one rule (lib/crystal_names.h), and the
 * type it constructs into type: its constructor's, else the Pointer(X) of a
 * buffer Pointer.malloc/realloc allocates ("" if neither); NULL when only
 * allocator frames are left. */
static const struct sym_frame *stack_site(const struct trace *t, struct symbolizer *sym,
					  const struct trace_stack *st, char *type, size_t type_len,
					  char *block, size_t block_len)
{
	struct frame_walk w = { .sym = sym };
	const struct sym_frame *f;
	struct site_rule rule;
	uint64_t ip;

	/* frame 0 is the probed GC function itself, whatever its name says */
	frames_begin(&w.it, t, st, 0);
	frames_next(&w.it, &ip);
	w.i = 1;
	site_rule_init(&rule);
	while ((f = next_frame(&w)) && !site_rule_is_site(&rule, f->symbol))
		;
	snprintf(type, type_len, "%s", rule.type[0] ? rule.type : rule.buffer);
	snprintf(block, block_len, "%s", rule.buffer[0] ? rule.buffer : rule.type);
	return f;
}

/* "function  file.cr:12": the frame's name, then file:line where DWARF
 * gives it (without DWARF, as diff reads traces, the name alone). */
static void site_name(struct outbuf *o, const struct sym_frame *f, bool lost)
{
	o->len = 0;
	outbuf_str(o, f ? f->name : lost ? "[stack lost]" : "[allocator only]");
	if (f && f->file) {
		outbuf_str(o, "  ");
		outbuf_str(o, base_name(f->file));
		if (f->line)
			outbuf_printf(o, ":%" PRIu32, f->line);
	}
	outbuf_char(o, '\0');
	for (char *p = o->buf; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = '?';
}

/* The type the allocation call in a stack's innermost frames constructs
 * by the type id stored after it: GC_malloc's caller (--release), or its
 * caller's (Crystal's malloc wrapper in a debug build). */
static void code_type(const struct model *m, const struct trace_stack *st, char *type,
		      size_t type_len)
{
	struct frame_iter it;
	uint64_t ip;

	frames_begin(&it, m->t, st, 4);
	frames_next(&it, &ip);
	while (frames_next(&it, &ip)) {
		const char *name = type_ids_call(&m->code_types, ip);

		if (name) {
			snprintf(type, type_len, "%s", name);
			return;
		}
	}
}

static const struct str_table *sort_names;

static int by_site_name(const void *a, const void *b)
{
	return strcmp(str_table_get(sort_names, *(const uint32_t *)a),
		      str_table_get(sort_names, *(const uint32_t *)b));
}

/* Every bucket's site and type; sites sorted by name (diff merges two
 * traces' sites by name), types in the order first seen. */
static void classify(struct model *m)
{
	const struct trace *t = m->t;
	struct str_table site_names, type_names;
	const struct sym_frame **frame_of;	/* per site name */
	const struct sym_frame **frame_b = xcalloc(m->nr_buckets, sizeof(*frame_b));
	uint32_t *name_of = xcalloc(m->nr_buckets, sizeof(*name_of));
	uint32_t *order, *rank;
	struct outbuf name;
	size_t n;

	str_table_init(&site_names);
	str_table_init(&type_names);
	outbuf_init(&name, -1);
	for (size_t b = 1; b < m->nr_buckets; b++) {
		const struct trace_stack *st = b <= t->nr_stacks ? &t->stacks[b - 1] : NULL;
		char type[SITE_TYPE_MAX] = "", block[SITE_TYPE_MAX] = "";
		const struct sym_frame *f = NULL;

		if (st && st->nr)
			f = stack_site(t, m->sym, st, type, sizeof(type), block, sizeof(block));
		if (st && !type[0] && m->has_code_types) {
			code_type(m, st, type, sizeof(type));
			snprintf(block, sizeof(block), "%s", type);
		}
		frame_b[b] = f;
		site_name(&name, f, !st || !st->nr);
		name_of[b] = str_table_intern(&site_names, name.buf);
		m->buckets[b].type = str_table_intern(&type_names, type);
		m->buckets[b].block = str_table_intern(&type_names, block);
	}
	/* frames: a site's name holds its frame's name, file and line */
	frame_of = xcalloc(site_names.nr, sizeof(*frame_of));
	for (size_t b = 1; b < m->nr_buckets; b++)
		if (!frame_of[name_of[b]])
			frame_of[name_of[b]] = frame_b[b];
	/* sites: names 1.. in name order */
	n = site_names.nr - 1;
	order = xcalloc(n ? n : 1, sizeof(*order));
	rank = xcalloc(site_names.nr, sizeof(*rank));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i + 1;
	sort_names = &site_names;
	qsort(order, n, sizeof(*order), by_site_name);
	m->sites = xcalloc(n ? n : 1, sizeof(*m->sites));
	m->nr_sites = n;
	for (size_t i = 0; i < n; i++) {
		rank[order[i]] = (uint32_t)i;
		m->sites[i].name = str_table_get(&m->names, str_table_intern(
			&m->names, str_table_get(&site_names, order[i])));
		m->sites[i].frame = frame_of[order[i]];
		m->sites[i].first_snap = UINT32_MAX;
	}
	for (size_t b = 1; b < m->nr_buckets; b++)
		m->buckets[b].site = rank[name_of[b]];
	m->nr_types = type_names.nr;
	m->types = xcalloc(m->nr_types, sizeof(*m->types));
	for (size_t i = 0; i < m->nr_types; i++)
		m->types[i].name = str_table_get(&m->names, str_table_intern(
			&m->names, str_table_get(&type_names, (uint32_t)i)));
	free(rank);
	free(order);
	free(frame_of);
	free(frame_b);
	free(name_of);
	outbuf_release(&name);
	str_table_free(&site_names);
	str_table_free(&type_names);
}

/* ---- the pass over the events ---- */

struct build {
	struct model *m;
	/* a replay (model_each_shown) only selects, and hands out what it
	 * selects: the model is built already */
	bool replay;
	trace_event_fn *fn;
	void *ctx;

	struct alloc_tally tally;	/* the buckets' totals, the blocks counted */

	struct u64_table thread_of;	/* tid + 1 -> index in threads */
	size_t cap_threads;
	uint32_t *dirty;		/* sites changed since the last snapshot */
	size_t nr_dirty;
	uint64_t alloc_space, inuse_space;	/* running totals */

	size_t next_coll;
	uint32_t last_gc;		/* without collection records */
	uint64_t last_ts;
	struct progress bar;
};

static struct model_thread *thread_of(struct build *bd, uint32_t tid)
{
	struct model *m = bd->m;
	struct u64_slot *sl = u64_table_get(&bd->thread_of, (uint64_t)tid + 1);

	if (sl)
		return &m->threads[sl->a];
	m->threads = grow_array(m->threads, &bd->cap_threads, m->nr_threads + 1,
				sizeof(*m->threads));
	memset(&m->threads[m->nr_threads], 0, sizeof(m->threads[0]));
	m->threads[m->nr_threads].tid = tid;
	u64_table_put(&bd->thread_of, (uint64_t)tid + 1, m->nr_threads, 0);
	return &m->threads[m->nr_threads++];
}

static void touch(struct build *bd, uint32_t site)
{
	struct model_site *s = &bd->m->sites[site];

	if (!s->dirty) {
		s->dirty = true;
		bd->dirty[bd->nr_dirty++] = site;
	}
}

/* The end of a collection read (or the end of the trace, end): the
 * changed sites' totals, and their rises and falls. */
static void snapshot(struct build *bd, uint64_t ts, bool end)
{
	struct model *m = bd->m;
	struct model_snapshot *sn;

	m->snaps = grow_array(m->snaps, &m->cap_snaps, m->nr_snaps + 1, sizeof(*m->snaps));
	sn = &m->snaps[m->nr_snaps];
	/* Time only moves forward, whatever clock skew between CPUs put into
	 * the records. */
	sn->ts_ns = m->nr_snaps && ts < sn[-1].ts_ns ? sn[-1].ts_ns : ts;
	sn->alloc_space = bd->alloc_space;
	sn->inuse_space = bd->inuse_space;
	sn->first_change = m->nr_changes;
	m->nr_snaps++;
	m->changes = grow_array(m->changes, &m->cap_changes, m->nr_changes + bd->nr_dirty,
				sizeof(*m->changes));
	for (size_t i = 0; i < bd->nr_dirty; i++) {
		struct model_site *s = &m->sites[bd->dirty[i]];
		uint64_t live = s->s.inuse_space;

		s->dirty = false;
		m->changes[m->nr_changes++] = (struct model_change){
			bd->dirty[i], s->s.alloc_space, live };
		if (end)
			continue;
		if (s->first_snap == UINT32_MAX) {
			s->first_snap = m->collection_snaps;
			s->first_live = live;
		} else if (live > s->last_live) {
			s->rises++;
		} else if (live < s->last_live) {
			s->falls++;
		}
		s->last_live = live;
		if (live > s->peak_live)
			s->peak_live = live;
	}
	bd->nr_dirty = 0;
	if (!end)
		m->collection_snaps++;
}

static bool in_time(const struct model *m, const struct trace_event *e)
{
	int64_t rel = (int64_t)(e->ts_ns - m->t->hdr.start_ns);

	return (!m->filter.has_from || rel >= m->filter.from_ns) &&
	       (!m->filter.has_to || rel <= m->filter.to_ns);
}

static void shown(struct build *bd, const struct trace_event *e)
{
	if (bd->replay)
		bd->fn(bd->ctx, e);
	else if (e->stack)
		bd->m->stack_shown[e->stack - 1] = 1;
}

/* The allocation e gives back, if it was counted and not given back yet. */
static void give_back(struct build *bd, const struct trace_event *e)
{
	struct model *m = bd->m;
	struct counted_block blk;
	const struct counted_block *old = &blk;
	struct model_bucket *bk;
	struct model_thread *th;

	if (!alloc_tally_release(&bd->tally, m->t, e, &blk) || bd->replay)
		return;
	bk = &m->buckets[old->bucket];
	th = thread_of(bd, old->tid);
	alloc_stats_drop(&m->sites[bk->site].s, old->objects, old->weight);
	m->sites[bk->site].frees++;
	/* allocated when gc_no collections had run: collection gc_no + 1 is
	 * the first after it (trace_free_since: the first it may have died at) */
	if (e->kind == ALYS_KIND_FREE && e->cause == ALYS_CAUSE_MARKS &&
	    trace_free_since(e) <= (uint64_t)old->gc_no + 1) {
		m->sites[bk->site].short_objects += old->objects;
		m->sites[bk->site].short_space += old->weight;
	}
	th->inuse_objects -= old->objects;
	th->inuse_space -= old->weight;
	bd->inuse_space -= old->weight;
	touch(bd, bk->site);
	m->frees_matched++;
}

static void count_alloc(struct build *bd, const struct trace_event *e)
{
	struct model *m = bd->m;
	struct model_bucket *bk;
	struct model_thread *th;
	uint64_t objs = event_objects(e);
	size_t b;

	shown(bd, e);
	b = alloc_tally_add(&bd->tally, m->t, e);
	if (bd->replay)
		return;
	bk = &m->buckets[b];
	th = thread_of(bd, e->tid);
	alloc_stats_count(&m->sites[bk->site].s, objs, e->weight);
	m->sites[bk->site].allocs++;
	th->allocs++;
	th->alloc_space += e->weight;
	th->inuse_objects += objs;
	th->inuse_space += e->weight;
	bd->alloc_space += e->weight;
	bd->inuse_space += e->weight;
	touch(bd, bk->site);
	m->alloc_events++;
}

/* Snapshots: after each collection read; without those, when allocations
 * start carrying a new gc_no. */
static void snapshots_before(struct build *bd, const struct trace_event *e)
{
	struct model *m = bd->m;
	const struct trace *t = m->t;

	for (; bd->next_coll < t->nr_collections &&
	       t->collections[bd->next_coll].first_event < e->id; bd->next_coll++)
		snapshot(bd, t->collections[bd->next_coll].ts_ns, false);
	if (!t->nr_collections && e->kind != ALYS_KIND_FREE && e->gc_no > bd->last_gc) {
		if (bd->last_gc)
			snapshot(bd, e->ts_ns, false);
		bd->last_gc = e->gc_no;
	}
	if (e->ts_ns > bd->last_ts)
		bd->last_ts = e->ts_ns;
	if (e->gc_no > m->last_gc && e->gc_no != UINT32_MAX)
		m->last_gc = e->gc_no;
}

/*
 * Events outside --time are ignored altogether: a block freed after the
 * window is still in use at its end. With --type, a free or realloc is
 * shown when the block it gives back was selected.
 */
static void on_event(void *ctx, const struct trace_event *e)
{
	struct build *bd = ctx;
	struct model *m = bd->m;
	bool prev_selected = e->prev_id && counted_blocks_has(&bd->tally.counted, e->prev_id);
	size_t b;

	progress_tick(&bd->bar, e->id);
	if (!bd->replay)
		snapshots_before(bd, e);
	if (!in_time(m, e))
		return;
	if (event_releases(e)) {
		if (e->kind == ALYS_KIND_FREE && !bd->replay)
			m->free_events++;
		give_back(bd, e);
	}
	if (!event_allocates(e)) {
		if (!m->filter.type || prev_selected)
			shown(bd, e);
		return;
	}
	b = model_bucket_of(m, e);
	if (m->filter.type && strcmp(model_type(m, b), m->filter.type))
		return;
	count_alloc(bd, e);
}

static void event_pass(struct build *bd)
{
	struct model *m = bd->m;
	const struct trace *t = m->t;

	alloc_tally_init(&bd->tally);
	counted_blocks_reserve(&bd->tally.counted, trace_live_most(t));
	progress_begin(&bd->bar, bd->replay ? "writing" : "analysing", t->nr_events);
	if (trace_each_event(t, on_event, bd))
		exit(1);
	progress_end(&bd->bar);
	if (bd->replay)
		return;
	for (size_t b = 1; b < m->nr_buckets; b++)
		m->buckets[b].s = alloc_tally_stats(&bd->tally, t, b);
	bd->last_ts = bd->last_ts > t->hdr.start_ns ? bd->last_ts : t->hdr.start_ns;
	for (; bd->next_coll < t->nr_collections; bd->next_coll++) {
		snapshot(bd, t->collections[bd->next_coll].ts_ns, false);
		/* a collection read after the last event: the end comes after it */
		if (t->collections[bd->next_coll].ts_ns > bd->last_ts)
			bd->last_ts = t->collections[bd->next_coll].ts_ns;
	}
	for (size_t c = 0; c < t->nr_collections; c++)
		if (t->collections[c].gc_no > m->last_gc)
			m->last_gc = t->collections[c].gc_no;
	/* The last point of the series is the end of the trace. */
	snapshot(bd, bd->last_ts, true);
}

void model_each_shown(const struct model *m, trace_event_fn *fn, void *ctx)
{
	struct build bd = { .m = (struct model *)m, .replay = true, .fn = fn, .ctx = ctx };

	event_pass(&bd);
	alloc_tally_free(&bd.tally);
}

/* ---- what needs the whole trace: ages, each type's totals and top site ---- */

/* The age of what is in use at the end: the blocks counted and not given
 * back. */
static void age_one(void *ctx, const struct counted_block *blk)
{
	struct model *m = ctx;
	struct model_site *s = &m->sites[m->buckets[blk->bucket].site];
	uint32_t age = m->last_gc > blk->gc_no ? m->last_gc - blk->gc_no : 0;

	s->age_sum += (uint64_t)age * blk->objects;
	if (age > s->age_max)
		s->age_max = age;
}

/* Each type's totals (its buckets') and biggest site. */
static void sum_types(struct model *m)
{
	struct u64_table pair;		/* type << 32 | site, + 1 -> bytes */

	u64_table_init(&pair);
	for (size_t b = 1; b < m->nr_buckets; b++) {
		const struct model_bucket *bk = &m->buckets[b];
		uint64_t key = ((uint64_t)bk->type << 32 | bk->site) + 1;
		struct model_type *ty = &m->types[bk->type];
		struct u64_slot *sl;
		uint64_t bytes;

		if (!bk->s.alloc_objects)
			continue;
		alloc_stats_add(&ty->s, &bk->s);
		sl = u64_table_get(&pair, key);
		bytes = (sl ? sl->a : 0) + bk->s.alloc_space;
		u64_table_put(&pair, key, bytes, 0);
		if (bytes > ty->top_site_bytes ||
		    (bytes == ty->top_site_bytes && bk->site < ty->top_site)) {
			ty->top_site_bytes = bytes;
			ty->top_site = bk->site;
		}
	}
	u64_table_free(&pair);
}

static int by_tid(const void *a, const void *b)
{
	const struct model_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* An empty model of t's buckets, not classified yet. */
static void model_begin(struct model *m, const struct trace *t, struct symbolizer *sym,
			uint32_t depth)
{
	memset(m, 0, sizeof(*m));
	m->t = t;
	m->sym = sym;
	m->depth = depth;
	str_table_init(&m->names);
	m->nr_buckets = model_nr_buckets(t);
	m->buckets = xcalloc(m->nr_buckets, sizeof(*m->buckets));
	m->stack_shown = xcalloc(t->nr_stacks ? t->nr_stacks : 1, 1);
}

/* Once sites hold their totals: types' totals and the whole's. */
static void sum_up(struct model *m)
{
	sum_types(m);
	for (size_t i = 0; i < m->nr_sites; i++)
		alloc_stats_add(&m->total, &m->sites[i].s);
}

void model_build(struct model *m, const struct trace *t, struct symbolizer *sym,
		 const struct event_filter *filter, uint32_t depth, bool with_code_types)
{
	struct build bd = { .m = m };

	model_begin(m, t, sym, depth);
	m->filter = *filter;
	if (with_code_types) {
		type_ids_scan(&m->code_types, t, sym);
		m->has_code_types = true;
	}
	classify(m);

	u64_table_init(&bd.thread_of);
	bd.dirty = xcalloc(m->nr_sites ? m->nr_sites : 1, sizeof(*bd.dirty));
	event_pass(&bd);
	alloc_tally_each_held(&bd.tally, t, age_one, m);
	free(bd.dirty);
	alloc_tally_free(&bd.tally);
	u64_table_free(&bd.thread_of);

	sum_up(m);
	for (size_t i = 0; i < m->nr_sites; i++) {
		struct model_site *s = &m->sites[i];

		s->snapshots = s->first_snap == UINT32_MAX ? 0 : m->collection_snaps - s->first_snap;
	}
	if (m->nr_threads)
		qsort(m->threads, m->nr_threads, sizeof(*m->threads), by_tid);
}

void model_from_buckets(struct model *m, const struct trace *t, struct symbolizer *sym,
			const struct alloc_stats *stats, uint32_t depth)
{
	model_begin(m, t, sym, depth);
	classify(m);
	for (size_t b = 1; b < m->nr_buckets; b++) {
		m->buckets[b].s = stats[b];
		alloc_stats_add(&m->sites[m->buckets[b].site].s, &stats[b]);
		if (b <= t->nr_stacks && stats[b].alloc_objects)
			m->stack_shown[b - 1] = 1;
	}
	sum_up(m);
}

void model_free(struct model *m)
{
	free(m->buckets);
	free(m->sites);
	free(m->types);
	free(m->threads);
	free(m->snaps);
	free(m->changes);
	free(m->stack_shown);
	free(m->frames);
	if (m->has_code_types)
		type_ids_free(&m->code_types);
	str_table_free(&m->names);
	memset(m, 0, sizeof(*m));
}

/* ---- reading the model ---- */

static void push_frame(struct model *m, size_t n, const struct sym_frame *f)
{
	m->frames = grow_array(m->frames, &m->cap_frames, n + 1, sizeof(*m->frames));
	m->frames[n] = f;
}

bool model_truncated(const struct model *m, size_t b)
{
	const struct trace_stack *st;

	if (b == 0 || b > m->t->nr_stacks)
		return false;
	st = &m->t->stacks[b - 1];
	return (st->flags & ALYS_STACK_FLAG_TRUNCATED) && !(m->depth && st->nr > m->depth);
}

/* Inlined frames of entry e, innermost first, that are allocator plumbing;
 * all of them (e->nr_frames) when the whole address is. */
static uint32_t plumbing_frames(const struct sym_entry *e)
{
	uint32_t k = 0;

	while (k < e->nr_frames && is_allocator_frame(e->frames[k].symbol))
		k++;
	return k;
}

uint32_t model_first_kept(struct model *m, const struct trace_stack *st, uint32_t depth,
			  uint32_t *skip)
{
	struct frame_iter it;
	uint64_t ip;

	*skip = 0;
	if (m->keep_allocator_frames)
		return 0;
	frames_begin(&it, m->t, st, depth);
	for (uint32_t k = 0; frames_next(&it, &ip); k++) {
		const struct sym_entry *e = symbolizer_entry(m->sym,
							     symbolizer_resolve(m->sym, ip, k));
		uint32_t n = plumbing_frames(e);

		if (n < e->nr_frames) {
			*skip = n;
			return k;
		}
	}
	return 0;
}

size_t model_frames(struct model *m, size_t b, const struct sym_frame ***frames)
{
	const struct trace *t = m->t;
	size_t n = 0;

	if (b > t->nr_stacks) {
		m->lost[0].name = m->lost[0].symbol = kind_function((unsigned int)(b - t->nr_stacks));
		m->lost[1].name = m->lost[1].symbol = "[stack lost]";
		push_frame(m, 0, &m->lost[0]);
		push_frame(m, 1, &m->lost[1]);
		*frames = m->frames;
		return 2;
	}
	const struct trace_stack *st = &t->stacks[b - 1];
	uint32_t skip, first = model_first_kept(m, st, m->depth, &skip);
	struct frame_iter it;
	uint64_t ip;

	frames_begin(&it, t, st, m->depth);
	for (uint32_t i = 0; frames_next(&it, &ip); i++) {
		const struct sym_entry *e;

		if (i < first)
			continue;
		e = symbolizer_entry(m->sym, symbolizer_resolve(m->sym, ip, i));
		for (uint32_t k = i == first ? skip : 0; k < e->nr_frames; k++)
			push_frame(m, n++, &e->frames[k]);
	}
	if (model_truncated(m, b)) {
		m->truncated.name = m->truncated.symbol = "[truncated]";
		push_frame(m, n++, &m->truncated);
	}
	*frames = m->frames;
	return n;
}

const struct model_snapshot *model_peak(const struct model *m)
{
	const struct model_snapshot *peak = NULL;

	for (size_t i = 0; i < m->nr_snaps; i++)
		if (!peak || m->snaps[i].inuse_space > peak->inuse_space)
			peak = &m->snaps[i];
	return peak;
}

static int name_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct model_site *)elem)->name);
}

const struct model_site *model_find_site(const struct model *m, const char *name)
{
	return m->nr_sites ? bsearch(name, m->sites, m->nr_sites, sizeof(*m->sites), name_cmp)
			   : NULL;
}

const char *inuse_meaning(const struct trace *t)
{
	switch (t->liveness) {
	case TRACE_LIVENESS_MARKS:
		return "in use: not freed by GC_free or GC_realloc, nor found dead by the "
		       "collector's marks at a later collection";
	case TRACE_LIVENESS_REUSE:
		return "in use: an upper bound: collected blocks are seen only when their "
		       "address is handed out again (the collector's layout was not usable)";
	default:
		return "in use: an upper bound: only GC_free and GC_realloc are seen (no liveness "
		       "in this trace)";
	}
}
