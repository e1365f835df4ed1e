// SPDX-License-Identifier: MIT
#include "profile/gc_memory.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

const char *const gc_memory_part_names[GC_MEM_PARTS] = {
	"live heap (marked)", "free in heap", "fiber stacks", "malloc (brk heap)",
	"other anonymous", "files (code, data)",
};

const char *const gc_memory_part_keys[GC_MEM_PARTS] = {
	"live_heap", "free_heap", "fiber_stacks", "malloc", "other_anon", "files",
};

void gc_memory_parts(const struct trace_memory *s, uint64_t parts[GC_MEM_PARTS])
{
	/* live is the last collection's: what it kept may since be paged
	 * out, never more than the heap's resident pages */
	uint64_t live = s->live < s->heap_resident ? s->live : s->heap_resident;

	parts[0] = live;
	parts[1] = s->heap_resident - live;
	parts[2] = s->fiber_stacks;
	parts[3] = s->malloc;
	parts[4] = s->anon;
	parts[5] = s->files;
}

static int by_site(const void *a, const void *b)
{
	const struct gc_grow_site *x = a, *y = b;

	return (uintptr_t)x->site < (uintptr_t)y->site ? -1 : (uintptr_t)x->site > (uintptr_t)y->site;
}

static int by_bytes_desc(const void *a, const void *b)
{
	const struct gc_grow_site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return by_site(a, b);
}

void gc_memory_summarize(struct model *m, struct gc_memory_summary *s)
{
	const struct trace *t = m->t;
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < t->nr_memory; i++)
		if (!s->peak || t->memory[i].rss > s->peak->rss)
			s->peak = &t->memory[i];
	s->last = t->nr_memory ? &t->memory[t->nr_memory - 1] : NULL;
	s->n_grows = t->nr_grows;
	s->sites = xcalloc(t->nr_grows + 1, sizeof(*s->sites));
	for (size_t i = 0; i < t->nr_grows; i++) {
		const struct trace_grow *g = &t->grows[i];

		s->sites[i] = (struct gc_grow_site){
			model_site(m, trace_bucket(t, g->stack, ALYS_KIND_MALLOC)), g->bytes, 1 };
		s->grown_bytes += g->bytes;
	}
	qsort(s->sites, t->nr_grows, sizeof(*s->sites), by_site);
	for (size_t i = 0; i < t->nr_grows; i++) {
		if (n && s->sites[n - 1].site == s->sites[i].site) {
			s->sites[n - 1].bytes += s->sites[i].bytes;
			s->sites[n - 1].n++;
			continue;
		}
		s->sites[n++] = s->sites[i];
	}
	s->nr_sites = n;
	qsort(s->sites, n, sizeof(*s->sites), by_bytes_desc);
}

void gc_memory_free(struct gc_memory_summary *s)
{
	free(s->sites);
	memset(s, 0, sizeof(*s));
}
