// SPDX-License-Identifier: MIT
#include "core/mem_sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock_ns.h"
#include "base/maps_file.h"
#include "base/pagemap.h"
#include "core/trace_writer.h"
#include "gc/fiber_list.h"
#include "gc/gc_probes.h"
#include "lib/util.h"

/* Crystal's Fiber::StackPool stacks: 8 MiB with a guard page (1.6-1.21);
 * a thread's main fiber runs on its thread's stack, seen to this depth. */
#define FIBER_STACK_MAX (8ull << 20)
#define COST_SHARE 20	/* a sample costs at most 1/COST_SHARE of the time */

enum vma_kind { VMA_FILE, VMA_ANON, VMA_BRK, VMA_SPECIAL };

struct vma {
	uint64_t start, end;
	enum vma_kind kind;
};

struct vmas {
	struct vma *v;
	size_t n, cap;
};

static int add_vma(const struct maps_line *l, void *arg)
{
	struct vmas *vs = arg;
	enum vma_kind k;

	if (!*l->path)
		k = VMA_ANON;
	else if (!strcmp(l->path, "[heap]"))
		k = VMA_BRK;
	else if (!strcmp(l->path, "[stack]") || !strncmp(l->path, "[anon:", 6))
		k = VMA_ANON;
	else if (l->path[0] == '[')	/* [vdso], [vvar], [vsyscall], [uprobes]: no RSS */
		k = VMA_SPECIAL;
	else
		k = VMA_FILE;
	vs->v = grow_array(vs->v, &vs->cap, vs->n + 1, sizeof(*vs->v));
	vs->v[vs->n++] = (struct vma){ l->start, l->end, k };
	return 0;
}

/* The mapping holding addr (maps lists them in address order). */
static const struct vma *vma_at(const struct vmas *vs, uint64_t addr)
{
	size_t lo = 0, hi = vs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < vs->v[mid].start)
			hi = mid;
		else if (addr >= vs->v[mid].end)
			lo = mid + 1;
		else
			return &vs->v[mid];
	}
	return NULL;
}

static uint64_t read_rss(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

void mem_sampler_init(struct mem_sampler *ms, pid_t pid, const struct gc_probes *gp,
		      uint64_t every_ns, uint64_t now, bool verbose)
{
	memset(ms, 0, sizeof(*ms));
	ms->pid = pid;
	ms->gp = gp;
	ms->pagemap = -1;
	ms->every_ns = every_ns;
	ms->verbose = verbose;
	gc_count_init(&ms->gc, pid, gp);
	/* the first soon: a short run still gets one */
	ms->next_ns = now + (every_ns < 100000000ull ? every_ns : 100000000ull);
}

/* At the first sample: a launched target has run its exec by then (its
 * pagemap and executable before it are the tracer's). */
static int open_target(struct mem_sampler *ms)
{
	char why[PATH_MAX + 128];

	ms->opened = true;
	ms->pagemap = pagemap_open(ms->pid);
	if (ms->pagemap < 0) {
		if (errno != ESRCH)
			fail("memory: cannot open /proc/%d/pagemap (%s): no memory samples\n",
			     ms->pid, strerror(errno));
		return -1;
	}
	if (fiber_list_find(ms->pid, &ms->fl, &ms->fiber_list, why, sizeof(why)) &&
	    ms->verbose)
		fail("memory: fibers' stacks not counted apart (%s)\n", why);
	if (!ms->gp->layout_ok && ms->verbose)
		fail("memory: the collector's heap not counted apart (%s)\n",
		     ms->gp->layout_why);
	return 0;
}

/* The collector's heap, walked between two reads of GC_gc_no that agree:
 * the mark bytes then are one collection's (one retry). */
static void read_heap(struct mem_sampler *ms, struct trace_memory *m)
{
	char err[256];
	uint64_t bias, no0 = 0, no1 = 0;

	if (!ms->gp->layout_ok || !gc_count_bias(&ms->gc, &bias))
		return;
	for (int tries = 0; tries < 2; tries++) {
		if (ms->gp->gc_no_vaddr)
			gc_count_read_word(&ms->gc, ms->gp->gc_no_vaddr, &no0);
		if (heap_usage_read(ms->pid, &ms->gp->layout, bias, &ms->hu, err, sizeof(err))) {
			if (ms->verbose && !ms->said_heap)
				fail("memory: cannot walk the collector's heap: %s\n", err);
			ms->said_heap = true;
			ms->hu.nr_ranges = 0;
			return;
		}
		if (ms->gp->gc_no_vaddr)
			gc_count_read_word(&ms->gc, ms->gp->gc_no_vaddr, &no1);
		if (no0 == no1)
			break;
	}
	m->live = ms->hu.live;
	m->heap_in_use = ms->hu.in_use;
	m->heap_free = ms->hu.free_mapped;
	m->heap_unmapped = ms->hu.unmapped;
	m->gc_no = (uint32_t)no1;
}

/* The listed fibers' stacks, each the part of its mapping below its end:
 * sorted, one range per mapping. A list caught mid-change is refused
 * (fiber_list.h): the last one read whole stands. */
static size_t fiber_ranges(struct mem_sampler *ms, const struct vmas *vs,
			   struct heap_range **out)
{
	struct fiber_entry *f = NULL;
	struct heap_range *r;
	char why[256];
	size_t n = 0, k = 0;

	if (!ms->fiber_list)
		return 0;
	if (!fiber_list_read(ms->pid, ms->fiber_list, &ms->fl, &f, &n, why, sizeof(why))) {
		free(ms->fibers);
		ms->fibers = f;
		ms->nr_fibers = n;
	} else if (ms->verbose && !ms->said_fibers) {
		fail("memory: cannot read the fibers' list (%s); the last one read stands\n",
		     why);
		ms->said_fibers = true;
	}
	r = xcalloc(ms->nr_fibers + 1, sizeof(*r));
	for (size_t i = 0; i < ms->nr_fibers; i++) {
		uint64_t bottom = ms->fibers[i].bottom;
		const struct vma *v = bottom ? vma_at(vs, bottom - 1) : NULL;

		if (!v || v->kind == VMA_FILE || v->kind == VMA_SPECIAL)
			continue;
		r[k].end = bottom;
		r[k].start = bottom - v->start > FIBER_STACK_MAX ? bottom - FIBER_STACK_MAX
								 : v->start;
		k++;
	}
	qsort(r, k, sizeof(*r), heap_range_cmp);
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (!n || r[i].start >= r[n - 1].end)
			r[n++] = r[i];
	*out = r;
	return n;
}

int mem_sampler_step(struct mem_sampler *ms, uint64_t now, bool force,
		     struct trace_writer *w)
{
	struct trace_memory m = { .ts_ns = now };
	struct vmas vs = { 0 };
	struct heap_range *fr = NULL;
	const struct vma *brk_vma = NULL;	/* [heap]: one at most */
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), anon = 0, brk = 0, heap_in_brk = 0, cost;
	size_t nfr;
	int ret = -1;

	if (!ms->every_ns || (!force && now < ms->next_ns))
		return 0;
	if (!ms->opened && open_target(ms))
		return -1;
	if (ms->pagemap < 0)
		return 0;
	if (proc_maps_each(ms->pid, add_vma, &vs) < 0)
		goto out;
	read_heap(ms, &m);
	nfr = fiber_ranges(ms, &vs, &fr);
	m.fibers = (uint32_t)ms->nr_fibers;
	for (size_t i = 0; i < vs.n; i++) {
		const struct vma *v = &vs.v[i];
		uint64_t *to = v->kind == VMA_FILE ? &m.files : v->kind == VMA_BRK ? &brk
			     : v->kind == VMA_ANON ? &anon : NULL;

		if (to && pagemap_resident(ms->pagemap, v->start, v->end, to))
			goto out;
	}
	for (size_t i = 0; i < vs.n && !brk_vma; i++)
		if (vs.v[i].kind == VMA_BRK)
			brk_vma = &vs.v[i];
	for (size_t i = 0; i < ms->hu.nr_ranges; i++) {
		const struct heap_range *h = &ms->hu.ranges[i];

		if (pagemap_resident(ms->pagemap, h->start, h->end, &m.heap_resident))
			goto out;
		/* a collector that takes its memory with sbrk shares [heap] */
		if (brk_vma) {
			uint64_t lo = h->start > brk_vma->start ? h->start : brk_vma->start;
			uint64_t hi = h->end < brk_vma->end ? h->end : brk_vma->end;

			if (lo < hi && pagemap_resident(ms->pagemap, lo, hi, &heap_in_brk))
				goto out;
		}
	}
	for (size_t i = 0; i < nfr; i++)
		if (pagemap_resident(ms->pagemap, fr[i].start, fr[i].end, &m.fiber_stacks))
			goto out;
	m.rss = read_rss(ms->pid);
	if (!m.rss)
		goto out;
	m.malloc = brk > heap_in_brk ? brk - heap_in_brk : 0;
	anon += heap_in_brk;	/* the collector's pages in [heap] are its */
	anon = anon > m.heap_resident ? anon - m.heap_resident : 0;
	m.anon = anon > m.fiber_stacks ? anon - m.fiber_stacks : 0;
	if (w)
		trace_writer_memory(w, &m);
	ms->last = m;
	ms->samples++;
	ret = 1;
out:
	cost = clock_ns(CLOCK_MONOTONIC) - t0;
	ms->cost_ns += cost;
	ms->next_ns = now + (ms->every_ns > cost * COST_SHARE ? ms->every_ns : cost * COST_SHARE);
	free(vs.v);
	free(fr);
	return ret;
}

void mem_sampler_free(struct mem_sampler *ms)
{
	if (ms->opened && ms->pagemap >= 0)	/* never started: zeroed */
		close(ms->pagemap);
	heap_usage_free(&ms->hu);
	free(ms->fibers);
	ms->pagemap = -1;
}
