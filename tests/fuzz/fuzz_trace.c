// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the converter's trace reader (profile/trace.c,
 * profile/mp_scan.c): each input is handed to trace_load() exactly as
 * alys_converter hands it a file, through a memfd named by /proc/self/fd/N,
 * so the mmap, the bounds checks and msgpack-c all see real file bytes.
 *
 * On success the loaded trace is walked and its invariants checked (every
 * index in range, counts consistent), then the analysis every format
 * renders is built from it (profile/model.c, with frames left unresolved:
 * a hostile mapping path opens nothing) and its sums checked; a violation
 * aborts, which libFuzzer reports like a crash. The reader's exit(1) on a failed allocation is a
 * finding too (libFuzzer flags a target that exits).
 *
 * Built and run by tests/fuzz/run.sh (make fuzz).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "converter/heap.h"
#include "profile/model.h"
#include "profile/symbolize.h"
#include "profile/trace.h"

static int fd = -1;
static char path[64];

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_trace: invariant violated: %s\n", what);
		abort();
	}
}

struct event_walk {
	const struct trace *t;
	uint32_t n;
	volatile uint64_t sink;
};

static void check_event(void *ctx, const struct trace_event *e)
{
	struct event_walk *w = ctx;
	const struct trace *t = w->t;
	const struct trace_stack *s = trace_event_stack(t, e);

	check(e->kind >= ALYS_KIND_MALLOC && e->kind <= ALYS_KIND_FREE, "event kind");
	check(strcmp(trace_kind_name(e->kind), "unknown") != 0, "kind name");
	check(e->stack <= t->nr_stacks, "event stack index");
	if (e->stack)
		check(t->stacks[e->stack - 1].nr <= TRACE_MAX_FRAMES, "stack depth");
	check(e->prev_id <= w->n, "prev_id refers to an earlier event");
	check(e->id == ++w->n, "event ids in order");
	if (s)
		w->sink += s->nr;
}

/* The second reading hands out exactly the events the first counted. */
static void walk_events(const struct trace *t)
{
	struct event_walk w = { .t = t };

	check(trace_each_event(t, check_event, &w) == 0, "events read again");
	check(w.n == t->nr_events, "as many events as counted");
}

static void walk(const struct trace *t, size_t file_size)
{
	volatile uint64_t sink = 0;

	check(t->hdr.version >= ALYS_FORMAT_VERSION_MIN && t->hdr.version <= ALYS_FORMAT_VERSION,
	      "loaded trace has a version the converter reads");
	for (size_t i = 0; i < t->nr_nodes; i++)
		check(t->nodes[i].parent <= i && t->nodes[i].depth <= TRACE_MAX_FRAMES,
		      "stack nodes hang from earlier ones");
	for (size_t i = 0; i < t->nr_maps; i++) {
		const struct trace_mapping *m = &t->maps[i];

		check(m->start < m->end, "mapping not empty");
		check(m->path.ptr && m->path.ptr[m->path.len] == 0, "mapping path terminated");
		if (i < 64)	/* a linear scan: keep big inputs fast */
			check(trace_find_mapping(t, m->start) != NULL,
			      "mapping start is found");
		for (uint32_t b = 0; b < m->build_id_len; b++)
			sink += m->build_id[b];
	}
	for (uint32_t i = 0; i < t->hdr.argc; i++)
		check(t->hdr.argv[i].ptr && t->hdr.argv[i].ptr[t->hdr.argv[i].len] == 0,
		      "argv terminated");
	for (size_t i = 0; i < t->nr_stacks; i++) {
		const struct trace_stack *s = &t->stacks[i];
		struct frame_iter it;
		uint32_t n = 0;
		uint64_t ip;

		check(s->id != 0, "stack id non-zero");
		check(s->leaf <= t->nr_nodes, "stack leaf is a node");
		check(!s->leaf || t->nodes[s->leaf - 1].depth == s->nr, "stack depth is its leaf's");
		for (frames_begin(&it, t, s, 0); frames_next(&it, &ip); n++)
			sink += ip;
		check(n == s->nr, "a stack's frames lead to the root");
	}
	walk_events(t);
	for (size_t i = 0; i < t->nr_counters; i++)
		check(t->counters[i].name.ptr != NULL, "counter name");
	check(t->has_end != t->cut_short, "exactly one of: end record, cut short");
	check(!t->cut_short || t->cut_at <= file_size, "cut offset inside the file");
	if (t->has_end && (t->end.present & END_REASON))
		check(t->end.reason.ptr != NULL, "end reason");
	(void)sink;
}

/* The sums every output relies on: each table adds up to the totals. */
static void check_model(const struct trace *t)
{
	struct symbolizer *sym = symbolizer_new(t, &(struct symbolizer_options){ .no_symbols = true });
	struct alloc_stats sites = { 0 }, buckets = { 0 };
	uint64_t threads = 0, prev_ts = 0;
	struct model m;

	model_build(&m, t, sym, &(struct event_filter){ 0 }, 0, false);
	for (size_t b = 1; b < m.nr_buckets; b++) {
		check(m.buckets[b].site < m.nr_sites, "bucket site in range");
		check(m.buckets[b].type < m.nr_types, "bucket type in range");
		buckets.alloc_space += m.buckets[b].s.alloc_space;
		buckets.inuse_space += m.buckets[b].s.inuse_space;
	}
	for (size_t i = 0; i < m.nr_sites; i++) {
		const struct model_site *s = &m.sites[i];

		check(s->s.inuse_space <= s->s.alloc_space, "site in use <= allocated");
		check(s->s.inuse_objects <= s->s.alloc_objects, "site objects in use <= allocated");
		check(s->frees <= s->allocs, "site frees <= allocations");
		check(s->snapshots <= m.collection_snaps, "site snapshots <= snapshots");
		check(!i || strcmp(m.sites[i - 1].name, s->name) < 0, "sites sorted, unique");
		sites.alloc_space += s->s.alloc_space;
		sites.inuse_space += s->s.inuse_space;
	}
	for (size_t i = 0; i < m.nr_threads; i++)
		threads += m.threads[i].inuse_space;
	check(sites.alloc_space == m.total.alloc_space && buckets.alloc_space == m.total.alloc_space,
	      "allocated bytes: sites and stacks add up to the total");
	check(sites.inuse_space == m.total.inuse_space && buckets.inuse_space == m.total.inuse_space &&
	      threads == m.total.inuse_space, "bytes in use: sites, stacks, threads add up");
	check(m.nr_snaps == m.collection_snaps + 1u, "one end point after the snapshots");
	for (size_t i = 0; i < m.nr_snaps; i++) {
		check(m.snaps[i].ts_ns >= prev_ts, "snapshot times monotone");
		check(m.snaps[i].first_change <= m.nr_changes, "snapshot changes in range");
		prev_ts = m.snaps[i].ts_ns;
	}
	for (size_t i = 0; i < m.nr_changes; i++)
		check(m.changes[i].site < m.nr_sites, "change site in range");
	model_free(&m);
	symbolizer_free(sym);
}

/* A snapshot's graph: every reached node's dominator and parent reached,
 * the virtual root retaining exactly the reachable bytes. */
static void check_heap(const struct trace *t)
{
	struct heap h;

	if (heap_build(&h, t))
		return;
	for (uint32_t i = 0; i < h.nr_reached; i++) {
		uint32_t v = h.rpo[i];

		check(v < h.nr_nodes, "reached node in range");
		check(h.idom[v] != HEAP_NONE && h.idom[v] < h.nr_nodes, "reached node has a dominator");
		check(h.parent[v] != HEAP_NONE, "reached node has a breadth-first parent");
		check(h.retained[v] <= h.retained[h.idom[v]], "a dominator retains at least as much");
	}
	check(h.retained[0] == h.reached_bytes, "the virtual root retains the reachable bytes");
	heap_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace t;

	if (fd < 0) {
		fd = memfd_create("fuzz.alys", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		perror("memfd write");
		abort();
	}
	if (trace_load(&t, path) == 0) {
		walk(&t, size);
		check_model(&t);
		check_heap(&t);
	}
	trace_free(&t);
	return 0;
}
