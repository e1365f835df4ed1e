// SPDX-License-Identifier: MIT
/*
 * The record sink's handling of liveness's deaths (issue 38): ring-buffer
 * records go through the sink and the writer, and come back through the
 * trace reader as the live profile reads them. A death is kept only for a
 * block the trace holds that was allocated before the collection that
 * found it, dated from its allocation; every other one (a block allocated
 * since, one the trace does not hold, a death found again) is dropped, and
 * the collection record counts the deaths kept.
 *
 * And the one record stream (issue 39): the records the writer hands its
 * tap, typed, build the same trace and the same counts (profile/
 * alloc_tally.c, as the live profile counts) as the file it writes, read
 * back by the converter's reader.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alys_events.h"
#include "alys_stack_key.h"
#include "core/record_sink.h"
#include "profile/alloc_tally.h"
#include "profile/trace.h"
#include "unit_check.h"

#define MAX_FREES 16

struct seen {
	struct trace_event frees[MAX_FREES];
	size_t nr_frees, nr_allocs;
};

static void saw(struct seen *s, const struct trace_event *e)
{

	if (e->kind == ALYS_KIND_FREE && s->nr_frees < MAX_FREES)
		s->frees[s->nr_frees++] = *e;
	else if (e->kind != ALYS_KIND_FREE)
		s->nr_allocs++;
}

static struct trace live;
static struct seen seen;

/* The writer's tap: the records typed, into a trace built as written, as
 * the daemon's live profile takes them. */
static void on_header(void *ctx, const struct trace_header *h)
{
	if (trace_put_header(ctx, h))
		abort();
}

static void on_event(void *ctx, const struct trace_event *e, uint32_t stack_id)
{
	struct trace_event ev = *e;

	if (trace_put_event(ctx, &ev, stack_id))
		abort();
	saw(&seen, &ev);
}

static void on_death(void *ctx, const struct trace_event *e)
{
	struct trace_event ev = *e;

	if (trace_put_death(ctx, &ev))
		abort();
	saw(&seen, &ev);
}

static void on_collection(void *ctx, const struct trace_collection *c)
{
	if (trace_put_collection(ctx, c))
		abort();
}

static const struct trace_tool tap = {
	.header = on_header, .event = on_event, .death = on_death,
	.collection = on_collection,
};

static uint64_t ts = 1000;

static void alloc(struct record_sink *rs, uint64_t addr, uint32_t gc_no)
{
	struct alys_rb_event e = { .type = ALYS_RB_EVENT, .kind = ALYS_KIND_MALLOC, .tid = 7,
				   .ts_ns = ts++, .size = 32, .addr = addr, .gc_no = gc_no };

	record_sink_on_record(rs, &e, sizeof(e));
}

static void death(struct record_sink *rs, uint8_t cause, uint64_t addr, uint32_t gc_no,
		  uint32_t since)
{
	struct alys_rb_death d = { .type = ALYS_RB_DEATH, .cause = cause, .gc_no = gc_no,
				   .since = since, .addr = addr, .ts_ns = ts++ };

	record_sink_on_record(rs, &d, sizeof(d));
}

static const struct trace_event *free_of(const struct seen *s, uint64_t addr)
{
	for (size_t i = 0; i < s->nr_frees; i++)
		if (s->frees[i].addr == addr)
			return &s->frees[i];
	return NULL;
}

/* ---- the one record stream: the tap against the file ---- */

#define MAX_EVENTS 64

struct side {
	struct trace t;
	struct alloc_tally tally;
	struct trace_event ev[MAX_EVENTS];
	size_t nr_ev;
};

static void side_count(struct side *sd, const struct trace_event *e)
{
	struct counted_block old;

	alloc_tally_release(&sd->tally, &sd->t, e, &old);
	if (event_allocates(e))
		alloc_tally_add(&sd->tally, &sd->t, e);
	if (sd->nr_ev < MAX_EVENTS)
		sd->ev[sd->nr_ev++] = *e;
}

static void must(int err)
{
	if (err)
		abort();
}

static void t_header(void *ctx, const struct trace_header *h)
{
	must(trace_put_header(&((struct side *)ctx)->t, h));
}

static void t_mapping(void *ctx, const struct trace_mapping *m)
{
	must(trace_put_mapping(&((struct side *)ctx)->t, m));
}

static void t_nodes(void *ctx, uint32_t first, uint32_t parent, const uint64_t *ips,
		    uint32_t nr, uint32_t flags)
{
	must(trace_put_nodes(&((struct side *)ctx)->t, first, parent, ips, nr, flags));
}

static void t_event(void *ctx, const struct trace_event *e, uint32_t stack_id)
{
	struct side *sd = ctx;
	struct trace_event ev = *e;

	must(trace_put_event(&sd->t, &ev, stack_id));
	side_count(sd, &ev);
}

static void t_death(void *ctx, const struct trace_event *e)
{
	struct side *sd = ctx;
	struct trace_event ev = *e;

	must(trace_put_death(&sd->t, &ev));
	side_count(sd, &ev);
}

static void t_collection(void *ctx, const struct trace_collection *c)
{
	must(trace_put_collection(&((struct side *)ctx)->t, c));
}

static void t_census(void *ctx, const struct trace_census *c,
		     const struct trace_census_type *types)
{
	must(trace_put_census(&((struct side *)ctx)->t, c, types));
}

/* Field by field, not memcmp: a struct's padding is whatever its memory
 * held (a census type's after its id failed once the heap changed). */
static bool same_census_type(const struct trace_census_type *x, const struct trace_census_type *y)
{
	return x->type_id == y->type_id && x->objects == y->objects && x->bytes == y->bytes &&
	       x->example == y->example;
}

static bool same_collection(const struct trace_collection *x, const struct trace_collection *y)
{
	return x->ts_ns == y->ts_ns && x->gc_no == y->gc_no && x->since == y->since &&
	       x->judged == y->judged && x->dead == y->dead && x->unreadable == y->unreadable &&
	       x->scan_ns == y->scan_ns && x->followed == y->followed &&
	       x->has_followed == y->has_followed && x->at_end == y->at_end &&
	       x->first_event == y->first_event;
}

static bool same_census(const struct trace_census *x, const struct trace_census *y)
{
	return x->ts_ns == y->ts_ns && x->gc_no == y->gc_no && x->blocks == y->blocks &&
	       x->unreadable == y->unreadable && x->walk_ns == y->walk_ns &&
	       x->first_type == y->first_type && x->nr_types == y->nr_types &&
	       x->first_event == y->first_event;
}

static bool same_event(const struct trace_event *x, const struct trace_event *y)
{
	return x->ts_ns == y->ts_ns && x->addr == y->addr && x->size == y->size &&
	       x->old_addr == y->old_addr && x->old_size == y->old_size && x->weight == y->weight &&
	       x->gc_no == y->gc_no && x->tid == y->tid && x->kind == y->kind &&
	       x->cause == y->cause && x->stack == y->stack && x->prev_id == y->prev_id &&
	       x->id == y->id;
}

static void t_counters(void *ctx, const struct trace_counter *c, size_t n)
{
	must(trace_put_counters(&((struct side *)ctx)->t, c, n));
}

static void t_end(void *ctx, const struct trace_end *e)
{
	must(trace_put_end(&((struct side *)ctx)->t, e));
}

static const struct trace_tool side_tool = {
	.header = t_header, .mapping = t_mapping, .stack_nodes = t_nodes, .event = t_event,
	.death = t_death, .collection = t_collection, .census = t_census,
	.counters = t_counters, .end = t_end,
};

static void file_event(void *ctx, const struct trace_event *e)
{
	side_count(ctx, e);
}

/* A stack record of frames ips (innermost first) below parent's key;
 * returns the whole stack's key, as the kernel computes it. */
static uint64_t stack_rec(struct record_sink *rs, uint64_t parent, const uint64_t *ips,
			  uint16_t nr)
{
	struct alys_rb_stack s = { .type = ALYS_RB_STACK, .nr = nr, .depth = nr,
				   .parent = parent };
	uint64_t key = parent;

	for (uint16_t i = nr; i > 0; i--)
		key = alys_stack_child_key(key, ips[i - 1]);
	s.key = key;

	memcpy(s.ips, ips, nr * sizeof(*ips));
	record_sink_on_record(rs, &s, ALYS_RB_STACK_SIZE(nr));
	return key;
}

static void event_rec(struct record_sink *rs, uint8_t kind, uint64_t key, uint64_t addr,
		      uint64_t size, uint64_t old_addr, uint32_t gc_no)
{
	struct alys_rb_event e = { .type = ALYS_RB_EVENT, .kind = kind, .tid = 9,
				   .ts_ns = ts++, .size = size, .addr = addr,
				   .old_addr = old_addr, .stack_key = key, .gc_no = gc_no };

	record_sink_on_record(rs, &e, sizeof(e));
}

static bool same_bstr(const struct bstr *a, const struct bstr *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->ptr, b->ptr, a->len));
}

static void one_stream(void)
{
	static struct record_sink rs;
	static struct side tap_side, file_side;
	char dir[] = "/tmp/test_record_sink.XXXXXX", path[64], err[256];
	static const uint64_t outer[] = { 0x4010, 0x4020, 0x4030 };	/* innermost first */
	static const uint64_t inner[] = { 0x4100, 0x4110 };
	static const char *const names[] = { "stack_sent", "gc_bytes" };
	static const uint64_t counts[] = { 2, 4096 };
	struct trace_writer_header h = { .pid = 2, .exe = "/prog", .start_ns = 1,
		.start_unix_ns = 5, .unwind = "dwarf", .max_frames = 128, .sample = "all",
		.liveness = "marks", .argv = (char *const[]){ "prog", "arg", NULL } };
	struct alys_rb_collection c = { .type = ALYS_RB_COLLECTION, .gc_no = 2, .since = 1,
					.followed = 8, .judged = 4 };
	struct trace_census_type row = { 17, 3, 96, 0x7000 };
	bool tables = true, events = true, counts_equal = true;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/t.alys", dir);
	trace_build_begin(&tap_side.t, "tap");
	alloc_tally_init(&tap_side.tally);
	if (trace_writer_open(&rs.w, path, (uid_t)-1, (gid_t)-1, err, sizeof(err))) {
		printf("FAIL writer: %s\n", err);
		exit(1);
	}
	trace_writer_tap(&rs.w, &side_tool, &tap_side);
	trace_writer_header(&rs.w, &h);
	trace_writer_mapping(&rs.w, 0x4000, 0x5000, 0, "/prog", (const uint8_t *)"\1\2\3", 3, 0);
	uint64_t ka = stack_rec(&rs, alys_stack_root_key(0), outer, 3);
	uint64_t kb = stack_rec(&rs, ka, inner, 2);

	event_rec(&rs, ALYS_KIND_MALLOC, ka, 0x10000, 48, 0, 0);
	event_rec(&rs, ALYS_KIND_MALLOC, kb, 0x20000, 64, 0, 0);
	event_rec(&rs, ALYS_KIND_MALLOC_ATOMIC, 0, 0x30000, 1000, 0, 0);	/* lost stack */
	event_rec(&rs, ALYS_KIND_REALLOC, kb, 0x21000, 128, 0x20000, 1);
	event_rec(&rs, ALYS_KIND_FREE, ka, 0x10000, 0, 0, 1);
	event_rec(&rs, ALYS_KIND_MALLOC, kb, 0x40000, 32, 0, 1);
	death(&rs, ALYS_CAUSE_MARKS, 0x30000, 2, 1);
	record_sink_on_record(&rs, &c, sizeof(c));
	trace_writer_census(&rs.w, ts++, 2, 9, 0, 500, &row, 1);
	trace_writer_counters(&rs.w, names, counts, 2);
	trace_writer_end(&rs.w, "exit", 0, ts++, "marks");
	if (trace_writer_close(&rs.w))
		abort();
	record_sink_free(&rs);

	alloc_tally_init(&file_side.tally);
	if (trace_load(&file_side.t, path) || trace_each_event(&file_side.t, file_event, &file_side))
		abort();
	unlink(path);
	rmdir(dir);

	struct trace *a = &tap_side.t, *b = &file_side.t;

	tables = a->nr_maps == 1 && b->nr_maps == 1 && a->maps[0].start == b->maps[0].start &&
		 a->maps[0].end == b->maps[0].end && same_bstr(&a->maps[0].path, &b->maps[0].path) &&
		 a->maps[0].build_id_len == 3 && b->maps[0].build_id_len == 3 &&
		 !memcmp(a->maps[0].build_id, b->maps[0].build_id, 3) &&
		 a->nr_nodes == 5 && b->nr_nodes == 5 &&
		 !memcmp(a->nodes, b->nodes, 5 * sizeof(*a->nodes)) &&
		 a->nr_stacks == b->nr_stacks && a->nr_stacks == 2 &&
		 !memcmp(a->stacks, b->stacks, a->nr_stacks * sizeof(*a->stacks));
	check("the tap and the file: the same mapping, nodes and stacks", tables);
	check("the same header (pid, argv, sample, liveness)",
	      a->hdr.pid == b->hdr.pid && a->hdr.argc == 2 && b->hdr.argc == 2 &&
	      same_bstr(&a->hdr.argv[1], &b->hdr.argv[1]) &&
	      same_bstr(&a->hdr.sample, &b->hdr.sample) && a->liveness == b->liveness &&
	      a->liveness == TRACE_LIVENESS_MARKS && a->hdr.present == b->hdr.present &&
	      a->hdr.start_unix_ns == b->hdr.start_unix_ns &&
	      same_bstr(&a->hdr.hostname, &b->hdr.hostname));
	check("the same collection, census, counters and end",
	      a->nr_collections == 1 && b->nr_collections == 1 &&
	      same_collection(a->collections, b->collections) &&
	      a->nr_censuses == 1 && b->nr_censuses == 1 &&
	      same_census(a->censuses, b->censuses) &&
	      a->nr_census_types == 1 && same_census_type(a->census_types, b->census_types) &&
	      a->nr_counters == 2 && b->nr_counters == 2 &&
	      a->counters[1].value == 4096 && b->counters[1].value == 4096 &&
	      same_bstr(&a->counters[1].name, &b->counters[1].name) &&
	      a->has_end && b->has_end && a->end.events == b->end.events &&
	      a->end.events == 6 && a->end.file_bytes == b->end.file_bytes &&
	      a->end.raw_bytes == b->end.raw_bytes && same_bstr(&a->end.reason, &b->end.reason));
	events = tap_side.nr_ev == 7 && file_side.nr_ev == 7;
	for (size_t i = 0; events && i < tap_side.nr_ev; i++)
		events = same_event(&tap_side.ev[i], &file_side.ev[i]);
	check("the same seven events, linked alike (ids, stacks, prev_id, sizes)", events);
	for (size_t k = 1; k < model_nr_buckets(a); k++) {
		struct alloc_stats x = alloc_tally_stats(&tap_side.tally, a, k);
		struct alloc_stats y = alloc_tally_stats(&file_side.tally, b, k);

		counts_equal &= !memcmp(&x, &y, sizeof(x));
	}
	{
		struct alloc_stats lost = alloc_tally_stats(&tap_side.tally, a, a->nr_stacks +
							    ALYS_KIND_MALLOC_ATOMIC);
		struct alloc_stats st2 = alloc_tally_stats(&tap_side.tally, a, 2);

		check("the same counts in every bucket (the model's), as the live profile counts",
		      counts_equal);
		check("counted: the lost stack's atomic block freed by marks, stack 2's realloc "
		      "in use (128 + 32 bytes of 224 allocated)",
		      lost.alloc_space == 1000 && lost.inuse_space == 0 &&
		      st2.alloc_space == 224 && st2.inuse_space == 160 &&
		      alloc_tally_realloc(&tap_side.tally, 2));
	}
	trace_free(a);
	trace_free(b);
	alloc_tally_free(&tap_side.tally);
	alloc_tally_free(&file_side.tally);
}

int main(void)
{
	static struct record_sink rs;
	struct trace_writer_header h = { .pid = 1, .exe = "/prog", .start_ns = 1, .unwind = "dwarf",
				  .max_frames = 16, .sample = "all", .liveness = "marks" };
	struct alys_rb_collection c = { .type = ALYS_RB_COLLECTION, .gc_no = 3, .since = 2,
					.followed = 40, .judged = 3, .dead = 99 };
	const struct trace_event *f;
	__u32 live_state = ALYS_LIVE_VERIFIED;
	char err[256];

	trace_build_begin(&live, "test");
	if (trace_writer_open(&rs.w, NULL, (uid_t)-1, (gid_t)-1, err, sizeof(err))) {
		printf("FAIL writer: %s\n", err);
		return 1;
	}
	trace_writer_tap(&rs.w, &tap, &live);
	rs.live_state = &live_state;
	trace_writer_header(&rs.w, &h);

	alloc(&rs, 0x1000, 0);		/* dies at collection 1 */
	alloc(&rs, 0x2000, 1);		/* dies at 3, scanned with 2 merged */
	alloc(&rs, 0x3000, 3);		/* allocated after 3: no death at 3 */
	alloc(&rs, 0x4000, 1);		/* handed out again at 3 */
	death(&rs, ALYS_CAUSE_MARKS, 0x1000, 1, 1);
	death(&rs, ALYS_CAUSE_MARKS, 0x1000, 2, 2);	/* found again */
	death(&rs, ALYS_CAUSE_MARKS, 0x2000, 3, 1);	/* scan covering 1..3 */
	death(&rs, ALYS_CAUSE_MARKS, 0x3000, 3, 2);	/* ambiguous hblk */
	death(&rs, ALYS_CAUSE_MARKS, 0x5000, 3, 2);	/* a block the trace lacks */
	death(&rs, ALYS_CAUSE_REUSE, 0x4000, 3, 0);
	alloc(&rs, 0x4000, 3);
	record_sink_on_record(&rs, &c, sizeof(c));
	trace_writer_flush(&rs.w);

	check("the five allocations read back", seen.nr_allocs == 5);
	check("three deaths kept of six reported", seen.nr_frees == 3 && rs.deaths == 3);
	f = free_of(&seen, 0x1000);
	check("a death found again is dropped, the first kept at its collection",
	      f && f->gc_no == 1 && trace_free_since(f) == 1 && seen.frees[0].addr == 0x1000);
	f = free_of(&seen, 0x2000);
	check("a merged scan's death dated from the allocation: since 2, not 1",
	      f && f->gc_no == 3 && trace_free_since(f) == 2 && f->cause == ALYS_CAUSE_MARKS);
	check("a block allocated after the collection is not reported dead",
	      !free_of(&seen, 0x3000));
	check("a block the trace does not hold is not reported", !free_of(&seen, 0x5000));
	f = free_of(&seen, 0x4000);
	check("a reuse dated from the allocation (since 2, at 3)",
	      f && f->cause == ALYS_CAUSE_REUSE && f->gc_no == 3 && trace_free_since(f) == 2);
	check("live_reused: the one reuse death kept while marks are read", rs.live_reused == 1);
	check("the blocks held: 0x3000 and the new 0x4000",
	      record_sink_holds(&rs, 0x3000) && record_sink_holds(&rs, 0x4000) &&
	      !record_sink_holds(&rs, 0x1000) && !record_sink_holds(&rs, 0x2000));
	check("the collection record counts the two kept from marks",
	      live.nr_collections == 1 && live.collections[0].dead == 2 &&
	      live.collections[0].judged == 3 && live.collections[0].followed == 40 &&
	      rs.collections == 1 && rs.scan_deaths == 0);

	trace_writer_close(&rs.w);
	record_sink_free(&rs);
	trace_free(&live);
	one_stream();
	return unit_summary();
}
