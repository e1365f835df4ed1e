// SPDX-License-Identifier: MIT
/*
 * Report output: what allocates, as text or Markdown.
 *
 *  - Top allocation sites by bytes and by count, like perf_tools'
 *    pretty_log_allocations: a site is the first frame, from the GC
 *    function outwards, that is neither allocator plumbing nor a
 *    constructor of the type being built (the model's site), shown with the
 *    file:line of the call.
 *  - Allocations by Crystal type, from the T::new / T#initialize /
 *    T.allocate frame (the model's type), like the compiler's __trace_new
 *    statistics, with each type's biggest site.
 *  - With --type: that type's top call stacks.
 *  - GC pauses: the collector's stop-the-world pauses, their spread, the
 *    longest and what triggered each (profile/gc_pauses.c).
 *  - Memory: RSS and its parts at the peak and at the last sample, the
 *    collector's heap, and its growths by site (profile/gc_memory.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/output.h"
#include "lib/util.h"
#include "profile/gc_memory.h"
#include "profile/gc_pauses.h"

#define TOP_SITES 20
#define TOP_TYPES 30
#define TOP_STACKS 10
#define STACK_FRAMES 24
#define TOP_PAUSES 10
#define TOP_GROW_SITES 10
#define MIB(x) ((double)(x) / 1048576.0)

/* A line of the site or type tables. */
struct row {
	const char *key;		/* the site's or the type's name */
	const struct model_site *site;	/* site rows, and a type's biggest site */
	struct alloc_stats s;
};

struct rows {
	struct row *r;
	size_t nr;
};

static int by_bytes(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->s.alloc_space != y->s.alloc_space)
		return x->s.alloc_space < y->s.alloc_space ? 1 : -1;
	if (x->s.alloc_objects != y->s.alloc_objects)
		return x->s.alloc_objects < y->s.alloc_objects ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int by_inuse(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->s.inuse_space != y->s.inuse_space)
		return x->s.inuse_space < y->s.inuse_space ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->s.alloc_objects != y->s.alloc_objects)
		return x->s.alloc_objects < y->s.alloc_objects ? 1 : -1;
	return by_bytes(a, b);
}

/* A name for a table cell: control bytes as '?', and in Markdown '|' and
 * backquotes escaped so a Crystal name cannot break the table. */
static void cell(struct outbuf *o, const char *s, bool md)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			outbuf_char(o, '?');
		else if (md && (c == '|' || c == '`' || c == '*' || c == '_' || c == '<' ||
				c == '>' || c == '\\' || c == '[' || c == ']'))
			outbuf_printf(o, "\\%c", c);
		else
			outbuf_char(o, (char)c);
	}
}

static void site_text(struct outbuf *o, const struct model_site *site, bool md)
{
	const struct sym_frame *f = site ? site->frame : NULL;

	if (!f) {
		cell(o, site ? site->name : "?", md);
		return;
	}
	cell(o, f->name, md);
	if (f->file) {
		outbuf_str(o, md ? " — " : "  ");
		cell(o, base_name(f->file), md);
		if (f->line)
			outbuf_printf(o, ":%" PRIu32, f->line);
	}
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void heading(struct outbuf *o, bool md, const char *title)
{
	if (md)
		outbuf_printf(o, "\n## %s\n\n", title);
	else
		outbuf_printf(o, "\n%s\n%.*s\n", title, (int)strlen(title),
			      "------------------------------------------------------------------------");
}

static void site_table(struct outbuf *o, struct rows *sites, const struct alloc_stats *tot,
		       bool md, const char *title, int (*order)(const void *, const void *),
		       uint64_t min_bytes, bool inuse)
{
	uint64_t tot_space = inuse ? tot->inuse_space : tot->alloc_space;
	uint64_t tot_objects = inuse ? tot->inuse_objects : tot->alloc_objects;
	size_t shown = 0;

	if (sites->nr > 1)	/* r is NULL when there are none */
		qsort(sites->r, sites->nr, sizeof(*sites->r), order);
	heading(o, md, title);
	if (md)
		outbuf_str(o, "| # | bytes | % | objects | % | avg size | site |\n"
			      "|---:|---:|---:|---:|---:|---:|---|\n");
	else
		outbuf_printf(o, "%4s %14s %6s %12s %6s %9s  %s\n", "#", "bytes", "%", "objects",
			      "%", "avg size", "site");
	for (size_t i = 0; i < sites->nr && shown < TOP_SITES; i++) {
		const struct row *r = &sites->r[i];
		uint64_t space = inuse ? r->s.inuse_space : r->s.alloc_space;
		uint64_t objects = inuse ? r->s.inuse_objects : r->s.alloc_objects;
		uint64_t avg = objects ? space / objects : 0;

		if (space < min_bytes || !objects)
			continue;
		shown++;
		if (md)
			outbuf_printf(o, "| %zu | %" PRIu64 " | %.1f | %" PRIu64 " | %.1f | %" PRIu64 " | ",
				      shown, space, pct(space, tot_space), objects,
				      pct(objects, tot_objects), avg);
		else
			outbuf_printf(o, "%4zu %14" PRIu64 " %5.1f%% %12" PRIu64 " %5.1f%% %9" PRIu64 "  ",
				      shown, space, pct(space, tot_space), objects,
				      pct(objects, tot_objects), avg);
		site_text(o, r->site, md);
		outbuf_str(o, md ? " |\n" : "\n");
	}
	if (!shown)
		outbuf_str(o, inuse ? (md ? "\n(nothing in use)\n" : "(nothing in use)\n")
				    : (md ? "\n(no allocations)\n" : "(no allocations)\n"));
}

static void type_table(struct outbuf *o, struct rows *types, const struct alloc_stats *tot,
		       bool md, uint64_t min_bytes)
{
	size_t shown = 0;

	if (types->nr > 1)
		qsort(types->r, types->nr, sizeof(*types->r), by_bytes);
	heading(o, md, "Allocations by type");
	if (md)
		outbuf_str(o, "| type | objects | % | bytes | % | avg size | biggest site |\n"
			      "|---|---:|---:|---:|---:|---:|---|\n");
	else
		outbuf_printf(o, "%-32s %12s %6s %14s %6s %9s  %s\n", "type", "objects", "%", "bytes",
			      "%", "avg size", "biggest site");
	for (size_t i = 0; i < types->nr && shown < TOP_TYPES; i++) {
		const struct row *r = &types->r[i];
		const char *name = r->key[0] ? r->key : "(no constructor frame)";
		uint64_t avg = r->s.alloc_objects ? r->s.alloc_space / r->s.alloc_objects : 0;

		if (r->s.alloc_space < min_bytes || !r->s.alloc_objects)
			continue;
		shown++;
		if (md) {
			outbuf_str(o, "| ");
			cell(o, name, true);
			outbuf_printf(o, " | %" PRIu64 " | %.1f | %" PRIu64 " | %.1f | %" PRIu64 " | ",
				      r->s.alloc_objects, pct(r->s.alloc_objects, tot->alloc_objects),
				      r->s.alloc_space, pct(r->s.alloc_space, tot->alloc_space), avg);
		} else {
			size_t before = o->len;

			cell(o, name, false);
			if (o->len - before < 32)
				outbuf_printf(o, "%*s", (int)(32 - (o->len - before)), "");
			outbuf_printf(o, " %12" PRIu64 " %5.1f%% %14" PRIu64 " %5.1f%% %9" PRIu64 "  ",
				      r->s.alloc_objects, pct(r->s.alloc_objects, tot->alloc_objects),
				      r->s.alloc_space, pct(r->s.alloc_space, tot->alloc_space), avg);
		}
		site_text(o, r->site, md);
		outbuf_str(o, md ? " |\n" : "\n");
	}
	if (!shown)
		outbuf_str(o, md ? "\n(no allocations)\n" : "(no allocations)\n");
}

struct bucket_rank {
	size_t b;
	uint64_t bytes, objects;
};

static int rank_by_bytes(const void *a, const void *b)
{
	const struct bucket_rank *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->b < y->b ? -1 : x->b > y->b;
}

/* --type: the biggest call stacks of that type, frames innermost first. */
static void type_stacks(struct model *m, struct outbuf *o, bool md, const char *type,
			uint64_t min_bytes)
{
	struct bucket_rank *rank = xcalloc(m->nr_buckets, sizeof(*rank));
	size_t nr = 0;
	char title[256];

	for (size_t b = 1; b < m->nr_buckets; b++)
		if (m->buckets[b].s.alloc_objects && m->buckets[b].s.alloc_space >= min_bytes)
			rank[nr++] = (struct bucket_rank){ b, m->buckets[b].s.alloc_space,
							    m->buckets[b].s.alloc_objects };
	qsort(rank, nr, sizeof(*rank), rank_by_bytes);
	snprintf(title, sizeof(title), "Top call stacks of %s", type);
	heading(o, md, title);
	for (size_t i = 0; i < nr && i < TOP_STACKS; i++) {
		const struct sym_frame **f;
		size_t n = model_frames(m, rank[i].b, &f);

		outbuf_printf(o, md ? "%zu. %" PRIu64 " bytes, %" PRIu64 " objects (%.1f%% of the bytes)\n\n"
			      : "#%zu  %" PRIu64 " bytes, %" PRIu64 " objects (%.1f%% of the bytes)\n",
			      i + 1, rank[i].bytes, rank[i].objects,
			      pct(rank[i].bytes, m->total.alloc_space));
		if (md)
			outbuf_str(o, "   ```\n");
		for (size_t k = 0; k < n && k < STACK_FRAMES; k++) {
			outbuf_str(o, md ? "   " : "    ");
			cell(o, f[k]->name, false);
			if (f[k]->file) {
				outbuf_str(o, "  ");
				cell(o, f[k]->file, false);
				if (f[k]->line)
					outbuf_printf(o, ":%" PRIu32, f[k]->line);
			}
			outbuf_char(o, '\n');
		}
		if (n > STACK_FRAMES)
			outbuf_printf(o, "%s... %zu more frames\n", md ? "   " : "    ", n - STACK_FRAMES);
		outbuf_str(o, md ? "   ```\n\n" : "\n");
	}
	if (!nr)
		outbuf_str(o, "(no allocations)\n");
	free(rank);
}

static void summary(struct model *m, struct outbuf *o, bool md)
{
	const struct trace *t = m->t;
	const char *li = md ? "- " : "  ";
	const struct model_snapshot *peak;

	outbuf_str(o, md ? "# Allocation report: " : "Allocation report: ");
	cell(o, t->hdr.exe.ptr ? t->hdr.exe.ptr : "?", md);
	outbuf_str(o, md ? "\n\n" : "\n");
	outbuf_str(o, li);
	outbuf_str(o, "Command: ");
	for (uint32_t i = 0; i < t->hdr.argc; i++) {
		if (i)
			outbuf_char(o, ' ');
		cell(o, t->hdr.argv[i].ptr ? t->hdr.argv[i].ptr : "", md);
	}
	if (!t->hdr.argc)
		outbuf_printf(o, "(attached to pid %" PRIu64 ")", t->hdr.pid);
	outbuf_char(o, '\n');
	if (t->hdr.container_id.ptr || t->hdr.cgroup.ptr || t->hdr.ns_pid) {
		outbuf_str(o, li);
		outbuf_str(o, "Container: ");
		cell(o, t->hdr.container_id.ptr ? t->hdr.container_id.ptr : "(no id)", md);
		if (t->hdr.pod_uid.ptr) {
			outbuf_str(o, ", pod ");
			cell(o, t->hdr.pod_uid.ptr, md);
		}
		if (t->hdr.cgroup.ptr) {
			outbuf_str(o, ", cgroup ");
			cell(o, t->hdr.cgroup.ptr, md);
		}
		if (t->hdr.ns_pid)
			outbuf_printf(o, ", pid %" PRIu64 " in its pid namespace", t->hdr.ns_pid);
		outbuf_char(o, '\n');
	}
	outbuf_str(o, li);
	outbuf_str(o, "Trace: ");
	cell(o, t->path, md);
	outbuf_printf(o, ", %zu events, sampling %s%s\n", t->nr_events,
		      t->hdr.sample.ptr ? t->hdr.sample.ptr : "all",
		      t->hdr.sample.ptr && strcmp(t->hdr.sample.ptr, "all") ?
		      " (figures are estimates scaled by each event's weight)" : "");
	if (t->hdr.sample_why.ptr) {
		outbuf_str(o, li);
		outbuf_str(o, "Sampling fell back from refill: ");
		cell(o, t->hdr.sample_why.ptr, md);
		outbuf_char(o, '\n');
	}
	if (t->hdr.liveness_why.ptr) {
		outbuf_str(o, li);
		outbuf_str(o, "Liveness by address reuse only: ");
		cell(o, t->hdr.liveness_why.ptr, md);
		outbuf_char(o, '\n');
	}
	if (t->duty_share > 0) {
		outbuf_str(o, li);
		outbuf_printf(o, "Probe windows saw %.1f%% of the bytes the collector counted; "
			      "weights are scaled up by that share\n", t->duty_share * 100);
	}
	if (m->filter.has_from || m->filter.has_to) {
		outbuf_str(o, li);
		outbuf_str(o, "Time window: ");
		if (m->filter.has_from)
			outbuf_printf(o, "%.6f s", (double)m->filter.from_ns / 1e9);
		outbuf_str(o, " .. ");
		if (m->filter.has_to)
			outbuf_printf(o, "%.6f s", (double)m->filter.to_ns / 1e9);
		outbuf_str(o, " since the trace start\n");
	}
	if (m->filter.type) {
		outbuf_str(o, li);
		outbuf_str(o, "Type: only allocations of ");
		cell(o, m->filter.type, md);
		outbuf_char(o, '\n');
	}
	outbuf_str(o, li);
	outbuf_printf(o, "Allocated: %" PRIu64 " objects, %" PRIu64 " bytes in %" PRIu64
		      " allocation events; %" PRIu64 " frees\n",
		      m->total.alloc_objects, m->total.alloc_space, m->alloc_events, m->free_events);
	outbuf_str(o, li);
	outbuf_printf(o, "Not freed by the end: %" PRIu64 " objects, %" PRIu64 " bytes (%s)\n",
		      m->total.inuse_objects, m->total.inuse_space, inuse_meaning(m->t));
	peak = model_peak(m);
	if (peak) {
		outbuf_str(o, li);
		outbuf_printf(o, "Peak in use: %" PRIu64 " bytes %s at %.6f s "
			      "(-f flamegraph --at peak draws them)\n", peak->inuse_space,
			      peak == &m->snaps[m->nr_snaps - 1] ? "at the end," :
								   "after the collection",
			      (double)(peak->ts_ns - m->t->hdr.start_ns) / 1e9);
	}
}

static int by_short(const void *a, const void *b)
{
	const struct model_site *x = ((const struct row *)a)->site, *y = ((const struct row *)b)->site;

	if (x->short_space != y->short_space)
		return x->short_space < y->short_space ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Short-lived allocations by site: churn a site could avoid (reuse a
 * buffer, build in place), which costs collections, not memory. */
static void short_lived_table(struct outbuf *o, struct rows *sites, bool md,
			      const struct model *m)
{
	size_t shown = 0;

	heading(o, md, "Short-lived: dead at the first collection after their allocation, by site");
	if (m->t->liveness != TRACE_LIVENESS_MARKS) {
		outbuf_str(o, "(needs the collector's marks: a trace with liveness from marks)\n");
		return;
	}
	if (sites->nr > 1)
		qsort(sites->r, sites->nr, sizeof(*sites->r), by_short);
	if (md)
		outbuf_str(o, "| # | bytes | objects | % of the site's objects | site |\n"
			      "|---:|---:|---:|---:|---|\n");
	else
		outbuf_printf(o, "%4s %14s %12s %8s  %s\n", "#", "bytes", "objects", "of site", "site");
	for (size_t i = 0; i < sites->nr && shown < TOP_SITES; i++) {
		const struct model_site *s = sites->r[i].site;

		if (!s->short_objects)
			break;
		shown++;
		if (md)
			outbuf_printf(o, "| %zu | %" PRIu64 " | %" PRIu64 " | %.1f | ", shown,
				      s->short_space, s->short_objects,
				      pct(s->short_objects, s->s.alloc_objects));
		else
			outbuf_printf(o, "%4zu %14" PRIu64 " %12" PRIu64 " %7.1f%%  ", shown,
				      s->short_space, s->short_objects,
				      pct(s->short_objects, s->s.alloc_objects));
		site_text(o, s, md);
		outbuf_str(o, md ? " |\n" : "\n");
	}
	if (!shown)
		outbuf_str(o, "(none)\n");
}

static int by_pause_desc(const void *a, const void *b)
{
	const struct gc_pause_row *x = *(const struct gc_pause_row *const *)a;
	const struct gc_pause_row *y = *(const struct gc_pause_row *const *)b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->p < y->p ? -1 : x->p > y->p;
}

/* The run's wall time: the trace's start to its end (else its last pause). */
static uint64_t run_ns(const struct trace *t)
{
	uint64_t end = t->has_end && (t->end.present & END_STOP_NS) ? t->end.stop_ns : 0;

	if (!end && t->nr_pauses)
		end = t->pauses[t->nr_pauses - 1].start_ns;
	return end > t->hdr.start_ns ? end - t->hdr.start_ns : 0;
}

static void pauses_section(struct model *m, struct outbuf *o, bool md)
{
	const struct trace *t = m->t;
	struct gc_pause_summary s;
	const struct gc_pause_row **top;
	size_t n;
	uint64_t wall = run_ns(t);

	if (!t->nr_pauses)
		return;
	gc_pauses_summarize(m, &s);
	heading(o, md, "GC pauses (the world stopped for the collector: every thread waits)");
	outbuf_printf(o, "%s%zu pauses, %.3f ms in all", md ? "- " : "  ", s.n,
		      (double)s.total_ns / 1e6);
	if (wall)
		outbuf_printf(o, ", %.2f%% of the run's %.3f s", pct(s.total_ns, wall),
			      (double)wall / 1e9);
	outbuf_printf(o, "; %zu asked for by GC.collect, %zu by allocations\n", s.n_explicit,
		      s.n - s.n_explicit);
	outbuf_printf(o, "%sp50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n", md ? "- " : "  ",
		      (double)s.p50_ns / 1e6, (double)s.p90_ns / 1e6, (double)s.p99_ns / 1e6,
		      (double)s.max_ns / 1e6);
	if (s.n_collections)
		outbuf_printf(o, "%sThe collections around %zu of them took %.3f ms, the lock held "
			      "(allocating threads wait): the world stopped for %.1f%% of it, "
			      "the rest sweeping and clearing marks before, finishing after\n",
			      md ? "- " : "  ", s.n_collections, (double)s.collection_ns / 1e6,
			      pct(s.collection_pause_ns, s.collection_ns));
	top = xcalloc(s.n, sizeof(*top));
	for (size_t i = 0; i < s.n; i++)
		top[i] = &s.rows[i];
	qsort(top, s.n, sizeof(*top), by_pause_desc);
	n = s.n < TOP_PAUSES ? s.n : TOP_PAUSES;
	if (md)
		outbuf_printf(o, "\nThe longest %zu:\n\n| ms | collection ms | at s | gc_no | "
			      "thread | trigger | site |\n|---:|---:|---:|---:|---:|---|---|\n", n);
	else
		outbuf_printf(o, "\n  The longest %zu:\n%10s %13s %9s %7s %8s  %-10s  %s\n", n, "ms",
			      "collection ms", "at s", "gc_no", "thread", "trigger", "site");
	for (size_t i = 0; i < n; i++) {
		const struct gc_pause_row *r = top[i];
		double at = (double)(int64_t)(r->p->stop_ns - t->hdr.start_ns) / 1e9;
		const char *why = r->explicit_gc ? "GC.collect" : "allocation";

		char coll[32] = "-";

		if (r->collection_ns)
			snprintf(coll, sizeof(coll), "%.3f", (double)r->collection_ns / 1e6);
		if (md)
			outbuf_printf(o, "| %.3f | %s | %.3f | %" PRIu32 " | %" PRIu32 " | %s | ",
				      (double)r->ns / 1e6, coll, at, r->p->gc_no, r->p->tid, why);
		else
			outbuf_printf(o, "%10.3f %13s %9.3f %7" PRIu32 " %8" PRIu32 "  %-10s  ",
				      (double)r->ns / 1e6, coll, at, r->p->gc_no, r->p->tid, why);
		site_text(o, model_site(m, r->bucket), md);
		outbuf_str(o, md ? " |\n" : "\n");
	}
	free(top);
	gc_pauses_free(&s);
}

static void memory_row(struct outbuf *o, bool md, const char *name, uint64_t a, uint64_t ra,
		       uint64_t b, uint64_t rb)
{
	if (md)
		outbuf_printf(o, "| %s | %.1f | %.1f%% | %.1f | %.1f%% |\n", name, MIB(a),
			      pct(a, ra), MIB(b), pct(b, rb));
	else
		outbuf_printf(o, "  %-26s %10.1f %6.1f%% %10.1f %6.1f%%\n", name, MIB(a),
			      pct(a, ra), MIB(b), pct(b, rb));
}

static void memory_section(struct model *m, struct outbuf *o, bool md)
{
	const struct trace *t = m->t;
	struct gc_memory_summary s;
	const struct trace_memory *p, *e;
	uint64_t pp[GC_MEM_PARTS], ep[GC_MEM_PARTS], psum = 0, esum = 0;
	char ph[48], eh[48];

	gc_memory_summarize(m, &s);
	if (!s.peak && !s.n_grows) {
		gc_memory_free(&s);
		return;
	}
	heading(o, md, "Memory (where RSS goes)");
	if (s.peak) {
		p = s.peak;
		e = s.last;
		gc_memory_parts(p, pp);
		gc_memory_parts(e, ep);
		for (int i = 0; i < GC_MEM_PARTS; i++) {
			psum += pp[i];
			esum += ep[i];
		}
		snprintf(ph, sizeof(ph), "peak, at %.1f s", (double)(int64_t)(p->ts_ns - t->hdr.start_ns) / 1e9);
		snprintf(eh, sizeof(eh), "last, at %.1f s", (double)(int64_t)(e->ts_ns - t->hdr.start_ns) / 1e9);
		outbuf_printf(o, "%s%zu samples, %.0f ms of the tracer's time. Parts are resident "
			      "pages (/proc/PID/pagemap); live is what the last collection "
			      "marked\n", md ? "- " : "  ", t->nr_memory,
			      (double)trace_counter_value(t, "memory_sample_ns") / 1e6);
		if (md)
			outbuf_printf(o, "\n| MiB | %s | | %s | |\n|---|---:|---:|---:|---:|\n", ph, eh);
		else
			outbuf_printf(o, "\n  %-26s %17s %17s\n", "MiB", ph, eh);
		memory_row(o, md, "RSS", p->rss, p->rss, e->rss, e->rss);
		for (int i = 0; i < GC_MEM_PARTS; i++)
			memory_row(o, md, gc_memory_part_names[i], pp[i], p->rss, ep[i], e->rss);
		memory_row(o, md, "(parts summed)", psum, p->rss, esum, e->rss);
		outbuf_printf(o, "%s%" PRIu32 " and %" PRIu32 " fibers listed. The collector's heap "
			      "(its own blocks): %.1f and %.1f MiB in use, %.1f and %.1f MiB free "
			      "kept mapped, %.1f and %.1f MiB given back to the system\n",
			      md ? "\n- " : "\n  ", p->fibers, e->fibers, MIB(p->heap_in_use),
			      MIB(e->heap_in_use), MIB(p->heap_free), MIB(e->heap_free),
			      MIB(p->heap_unmapped), MIB(e->heap_unmapped));
	}
	if (s.n_grows) {
		size_t n = s.nr_sites < TOP_GROW_SITES ? s.nr_sites : TOP_GROW_SITES;

		outbuf_printf(o, "%sThe collector's heap grew %zu times, %.1f MiB in all; "
			      "by the site whose allocation needed it:\n", md ? "\n- " : "\n  ",
			      s.n_grows, MIB(s.grown_bytes));
		if (md)
			outbuf_str(o, "\n| MiB | times | site |\n|---:|---:|---|\n");
		else
			outbuf_printf(o, "%10s %7s  %s\n", "MiB", "times", "site");
		for (size_t i = 0; i < n; i++) {
			if (md)
				outbuf_printf(o, "| %.1f | %" PRIu64 " | ", MIB(s.sites[i].bytes),
					      s.sites[i].n);
			else
				outbuf_printf(o, "%10.1f %7" PRIu64 "  ", MIB(s.sites[i].bytes),
					      s.sites[i].n);
			site_text(o, s.sites[i].site, md);
			outbuf_str(o, md ? " |\n" : "\n");
		}
	}
	gc_memory_free(&s);
}

/* Leak suspects, object age and threads come from -f leaks, which follows
 * live bytes through the whole trace (so only without window or type). */
static void liveness_sections(struct model *m, struct outbuf *o,
			      const struct output_options *opt)
{
	heading(o, opt->markdown, "Liveness (as -f leaks: leak suspects, threads)");
	if (opt->markdown)
		outbuf_str(o, "```\n");
	/* The in-use table is the report's own, above: printed once. */
	leaks_sections(m, o, false);
	if (opt->markdown)
		outbuf_str(o, "```\n");
}

void write_report(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	bool md = opt->markdown;
	struct rows sites = { xcalloc(m->nr_sites + 1, sizeof(struct row)), 0 };
	struct rows types = { xcalloc(m->nr_types + 1, sizeof(struct row)), 0 };

	for (size_t i = 0; i < m->nr_sites; i++)
		sites.r[sites.nr++] = (struct row){ m->sites[i].name, &m->sites[i], m->sites[i].s };
	for (size_t i = 0; i < m->nr_types; i++)
		types.r[types.nr++] = (struct row){ m->types[i].name,
						    &m->sites[m->types[i].top_site], m->types[i].s };

	summary(m, o, md);
	site_table(o, &sites, &m->total, md, "Top allocation sites by bytes", by_bytes,
		   opt->min_bytes, false);
	site_table(o, &sites, &m->total, md, "Top allocation sites by count", by_count,
		   opt->min_bytes, false);
	site_table(o, &sites, &m->total, md, m->filter.has_to ?
		   "In use at the end of the window, by site" : "In use at the end, by site",
		   by_inuse, opt->min_bytes, true);
	type_table(o, &types, &m->total, md, opt->min_bytes);
	short_lived_table(o, &sites, md, m);
	if (m->filter.type)
		type_stacks(m, o, md, m->filter.type, opt->min_bytes);
	pauses_section(m, o, md);
	memory_section(m, o, md);
	if (!m->filter.type && !m->filter.has_from && !m->filter.has_to)
		liveness_sections(m, o, opt);
	free(sites.r);
	free(types.r);
}
