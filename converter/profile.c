// SPDX-License-Identifier: MIT
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "crystal_names.h"
#include "progress.h"
#include "util.h"

#define MAX_TYPE_NAME 1024

static bool is_alloc(unsigned int kind)
{
	return kind == KIND_MALLOC || kind == KIND_MALLOC_ATOMIC || kind == KIND_REALLOC;
}

const char *kind_function(unsigned int kind)
{
	switch (kind) {
	case KIND_MALLOC: return "GC_malloc";
	case KIND_MALLOC_ATOMIC: return "GC_malloc_atomic";
	case KIND_REALLOC: return "GC_realloc";
	case KIND_FREE: return "GC_free";
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
	p->nr_buckets = t->nr_stacks + 1 + KIND_REALLOC;
	p->stats = xcalloc(p->nr_buckets, sizeof(*p->stats));
	p->type_of = xcalloc(p->nr_buckets, sizeof(*p->type_of));
	p->selected = xcalloc(t->nr_events ? t->nr_events : 1, 1);
}

size_t profile_bucket_of(const struct profile *p, const struct trace_event *e)
{
	if (e->stack && p->t->stacks[e->stack - 1].nr)
		return e->stack;
	return p->t->nr_stacks + (e->kind <= KIND_REALLOC ? e->kind : KIND_MALLOC);
}

static bool in_time(const struct profile *p, const struct trace_event *e)
{
	int64_t rel = (int64_t)(e->ts_ns - p->t->hdr.start_ns);

	return (!p->filter.has_from || rel >= p->filter.from_ns) &&
	       (!p->filter.has_to || rel <= p->filter.to_ns);
}

/* A free (or the release half of a realloc) gives back what it replaced. */
static void give_back(struct profile *p, const struct trace_event *e)
{
	const struct trace_event *old;
	struct alloc_stats *st;
	uint64_t objs;

	if (!e->prev_id || e->prev_id > p->t->nr_events || !p->selected[e->prev_id - 1])
		return;
	old = &p->t->events[e->prev_id - 1];
	if (!is_alloc(old->kind) || p->selected[e->prev_id - 1] != 1)
		return;
	p->selected[e->prev_id - 1] = 2;	/* counted as given back once */
	st = &p->stats[profile_bucket_of(p, old)];
	objs = event_objects(old);
	st->inuse_objects -= objs;
	st->inuse_space -= old->weight;
	p->frees_matched++;
}

void profile_build(struct profile *p)
{
	const struct trace *t = p->t;
	struct progress bar;

	progress_begin(&bar, "profiling", t->nr_events);
	for (size_t i = 0; i < t->nr_events; i++) {
		const struct trace_event *e = &t->events[i];
		struct alloc_stats *st;
		uint64_t objs;
		size_t b;

		progress_tick(&bar, i);
		if (!is_alloc(e->kind)) {
			/* a free is shown when the block it frees is */
			if (e->kind == KIND_FREE && (!p->filter.has_to || in_time(p, e)) &&
			    (!p->filter.type || (e->prev_id && p->selected[e->prev_id - 1]))) {
				give_back(p, e);
				p->selected[i] = in_time(p, e);
				p->free_events += p->selected[i];
			}
			continue;
		}
		if (e->kind == KIND_REALLOC && (!p->filter.has_to || in_time(p, e)))
			give_back(p, e);
		if (!in_time(p, e))
			continue;
		b = profile_bucket_of(p, e);
		if (p->filter.type && strcmp(profile_type(p, b), p->filter.type))
			continue;
		p->selected[i] = 1;
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
	*frames = p->frames;
	return n;
}

const char *profile_type(struct profile *p, size_t b)
{
	const struct trace *t = p->t;
	char type[MAX_TYPE_NAME] = "";

	if (p->type_of[b])
		return p->type_of[b];
	if (b <= t->nr_stacks) {
		const struct trace_stack *st = &t->stacks[b - 1];
		bool found = false;

		/* innermost constructor frame, over the whole stack */
		for (uint32_t i = 0; i < st->nr && !found; i++) {
			const struct sym_entry *e = symbolizer_entry(
				p->sym, symbolizer_resolve(p->sym, t->ips[st->first + i], i));

			for (uint32_t k = 0; k < e->nr_frames && !found; k++)
				found = crystal_constructed_type(e->frames[k].name, type,
								 sizeof(type));
		}
	}
	p->type_of[b] = xmemdup_str(type, strlen(type));
	return p->type_of[b];
}

void profile_free(struct profile *p)
{
	for (size_t b = 0; b < p->nr_buckets; b++)
		free(p->type_of[b]);
	free(p->type_of);
	free(p->stats);
	free(p->selected);
	free(p->frames);
}
