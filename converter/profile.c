// SPDX-License-Identifier: MIT
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crystal_names.h"
#include "progress.h"
#include "util.h"


/*
 * An allocation event adds a block. A GC_realloc that returned NULL for a
 * non-zero size (failed: the old block stays) or was asked for 0 bytes (a
 * free) adds none.
 */
bool event_allocates(const struct trace_event *e)
{
	if (e->kind == ALYS_KIND_MALLOC || e->kind == ALYS_KIND_MALLOC_ATOMIC)
		return true;
	return e->kind == ALYS_KIND_REALLOC && e->addr && e->size;
}

/* A free, or a realloc that did not fail, gives back the block it replaces. */
static bool event_releases(const struct trace_event *e)
{
	return e->kind == ALYS_KIND_FREE || (e->kind == ALYS_KIND_REALLOC && !(!e->addr && e->size));
}

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

uint64_t event_objects(const struct trace_event *e)
{
	if (!e->size || e->weight <= e->size)
		return 1;
	return (e->weight + e->size / 2) / e->size;
}

void profile_init(struct profile *p, const struct trace *t, struct symbolizer *sym,
		  const struct event_filter *filter, uint32_t depth)
{
	memset(p, 0, sizeof(*p));
	p->t = t;
	p->sym = sym;
	p->filter = *filter;
	p->depth = depth;
	/* stacks, then lost stacks of kinds 1..3 */
	p->nr_buckets = t->nr_stacks + 1 + ALYS_KIND_REALLOC;
	p->stats = xcalloc(p->nr_buckets, sizeof(*p->stats));
	p->type_of = xcalloc(p->nr_buckets, sizeof(*p->type_of));
	p->site_of = xcalloc(p->nr_buckets, sizeof(*p->site_of));
	p->classified = xcalloc(p->nr_buckets, 1);
	p->selected = xcalloc(t->nr_events ? t->nr_events : 1, 1);
}

size_t profile_bucket_of(const struct profile *p, const struct trace_event *e)
{
	if (e->stack && p->t->stacks[e->stack - 1].nr)
		return e->stack;
	return p->t->nr_stacks + (e->kind <= ALYS_KIND_REALLOC ? e->kind : ALYS_KIND_MALLOC);
}

static bool in_time(const struct profile *p, const struct trace_event *e)
{
	int64_t rel = (int64_t)(e->ts_ns - p->t->hdr.start_ns);

	return (!p->filter.has_from || rel >= p->filter.from_ns) &&
	       (!p->filter.has_to || rel <= p->filter.to_ns);
}

/* The allocation event e gives back, if it was counted and not given back yet. */
static void give_back(struct profile *p, const struct trace_event *e)
{
	const struct trace_event *old;
	struct alloc_stats *st;
	size_t oi;

	if (!e->prev_id || e->prev_id > p->t->nr_events)
		return;
	oi = e->prev_id - 1;
	old = &p->t->events[oi];
	if (p->selected[oi] != SEL_COUNTED || !event_allocates(old))
		return;
	p->selected[oi] = SEL_GIVEN_BACK;
	st = &p->stats[profile_bucket_of(p, old)];
	st->inuse_objects -= event_objects(old);
	st->inuse_space -= old->weight;
	p->frees_matched++;
}

/*
 * One pass in file order. Events outside --time are ignored altogether: a
 * block freed after the window is still in use at its end. With --type, a
 * free or realloc is shown when the block it gives back was selected.
 */
void profile_build(struct profile *p)
{
	const struct trace *t = p->t;
	struct progress bar;

	progress_begin(&bar, "profiling", t->nr_events);
	for (size_t i = 0; i < t->nr_events; i++) {
		const struct trace_event *e = &t->events[i];
		bool prev_selected = e->prev_id && e->prev_id <= t->nr_events &&
				     p->selected[e->prev_id - 1];
		struct alloc_stats *st;
		uint64_t objs;
		size_t b;

		progress_tick(&bar, i);
		if (!in_time(p, e))
			continue;
		if (event_releases(e)) {
			if (e->kind == ALYS_KIND_FREE)
				p->free_events++;
			give_back(p, e);
		}
		if (!event_allocates(e)) {
			if (!p->filter.type || prev_selected)
				p->selected[i] = SEL_SHOWN;
			continue;
		}
		b = profile_bucket_of(p, e);
		if (p->filter.type && strcmp(profile_type(p, b), p->filter.type))
			continue;
		p->selected[i] = SEL_COUNTED;
		objs = event_objects(e);
		st = &p->stats[b];
		st->alloc_objects += objs;
		st->alloc_space += e->weight;
		st->inuse_objects += objs;
		st->inuse_space += e->weight;
		p->alloc_events++;
	}
	progress_end(&bar);
	for (size_t b = 1; b < p->nr_buckets; b++) {
		p->total.alloc_objects += p->stats[b].alloc_objects;
		p->total.alloc_space += p->stats[b].alloc_space;
		p->total.inuse_objects += p->stats[b].inuse_objects;
		p->total.inuse_space += p->stats[b].inuse_space;
	}
}

static void push_frame(struct profile *p, size_t n, const struct sym_frame *f)
{
	p->frames = grow_array(p->frames, &p->cap_frames, n + 1, sizeof(*p->frames));
	p->frames[n] = f;
}

bool profile_truncated(const struct profile *p, size_t b)
{
	const struct trace_stack *st;

	if (b == 0 || b > p->t->nr_stacks)
		return false;
	st = &p->t->stacks[b - 1];
	return (st->flags & ALYS_STACK_FLAG_TRUNCATED) && !(p->depth && st->nr > p->depth);
}

size_t profile_frames(struct profile *p, size_t b, const struct sym_frame ***frames)
{
	const struct trace *t = p->t;
	size_t n = 0;

	if (b > t->nr_stacks) {
		p->lost[0].name = kind_function((unsigned int)(b - t->nr_stacks));
		p->lost[1].name = "[stack lost]";
		push_frame(p, 0, &p->lost[0]);
		push_frame(p, 1, &p->lost[1]);
		*frames = p->frames;
		return 2;
	}
	const struct trace_stack *st = &t->stacks[b - 1];
	uint32_t nr = st->nr;

	if (p->depth && nr > p->depth)
		nr = p->depth;
	for (uint32_t i = 0; i < nr; i++) {
		const struct sym_entry *e =
			symbolizer_entry(p->sym, symbolizer_resolve(p->sym, t->ips[st->first + i], i));

		for (uint32_t k = 0; k < e->nr_frames; k++)
			push_frame(p, n++, &e->frames[k]);
	}
	if (profile_truncated(p, b)) {
		p->truncated.name = "[truncated]";
		push_frame(p, n++, &p->truncated);
	}
	*frames = p->frames;
	return n;
}

/* Frame k (flattened, innermost first, whole stack) of a stack. */
struct frame_walk {
	const struct trace *t;
	struct symbolizer *sym;
	const struct trace_stack *st;
	uint32_t i, k;
};

static const struct sym_frame *next_frame(struct frame_walk *w)
{
	while (w->i < w->st->nr) {
		const struct sym_entry *e = symbolizer_entry(
			w->sym, symbolizer_resolve(w->sym, w->t->ips[w->st->first + w->i], w->i));

		if (w->k < e->nr_frames)
			return &e->frames[w->k++];
		w->i++;
		w->k = 0;
	}
	return NULL;
}

/* The site and type of a stack by the one rule (lib/crystal_names.h). */
const struct sym_frame *stack_site(const struct trace *t, struct symbolizer *sym,
				   const struct trace_stack *st, char *type, size_t type_len)
{
	/* ips[0] is the probed GC function itself, whatever its name says. */
	struct frame_walk w = { .t = t, .sym = sym, .st = st, .i = 1 };
	const struct sym_frame *f;
	struct site_rule rule;

	site_rule_init(&rule);
	while ((f = next_frame(&w)) && !site_rule_is_site(&rule, f->name))
		;
	snprintf(type, type_len, "%s", rule.type);
	return f;
}

static void classify(struct profile *p, size_t b)
{
	char type[SITE_TYPE_MAX] = "";
	const struct sym_frame *site = NULL;

	if (b <= p->t->nr_stacks)
		site = stack_site(p->t, p->sym, &p->t->stacks[b - 1], type, sizeof(type));
	p->type_of[b] = xmemdup_str(type, strlen(type));
	p->site_of[b] = site;
	p->classified[b] = 1;
}

const char *profile_type(struct profile *p, size_t b)
{
	if (!p->classified[b])
		classify(p, b);
	return p->type_of[b];
}

const struct sym_frame *profile_site(struct profile *p, size_t b)
{
	if (!p->classified[b])
		classify(p, b);
	return p->site_of[b];
}

void profile_free(struct profile *p)
{
	for (size_t b = 0; b < p->nr_buckets; b++)
		free(p->type_of[b]);
	free(p->type_of);
	free(p->site_of);
	free(p->classified);
	free(p->stats);
	free(p->selected);
	free(p->frames);
}

const char *inuse_meaning(const struct trace *t)
{
	const struct bstr *m = t->has_end && t->end.liveness.ptr ? &t->end.liveness : &t->hdr.liveness;

	if (m->ptr && m->len == 5 && !memcmp(m->ptr, "marks", 5))
		return "in use: not freed by GC_free or GC_realloc, nor found dead by the "
		       "collector's marks at a later collection";
	if (m->ptr && m->len == 5 && !memcmp(m->ptr, "reuse", 5))
		return "in use: an upper bound: collected blocks are seen only when their "
		       "address is handed out again (the collector's layout was not usable)";
	return "in use: an upper bound: only GC_free and GC_realloc are seen (no liveness "
	       "in this trace)";
}
