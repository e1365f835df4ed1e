// SPDX-License-Identifier: MIT
/*
 * The record sink's handling of liveness's deaths (issue 38): ring-buffer
 * records go through the sink and the writer, and come back through the
 * trace reader as the live profile reads them. A death is kept only for a
 * block the trace holds that was allocated before the collection that
 * found it, dated from its allocation; every other one (a block allocated
 * since, one the trace does not hold, a death found again) is dropped, and
 * the collection record counts the deaths kept.
 */
#include <stdlib.h>
#include <string.h>

#include "alys_events.h"
#include "core/record_sink.h"
#include "profile/trace.h"
#include "unit_check.h"

#define MAX_FREES 16

struct seen {
	struct trace_event frees[MAX_FREES];
	size_t nr_frees, nr_allocs;
};

static void on_event(void *ctx, const struct trace_event *e)
{
	struct seen *s = ctx;

	if (e->kind == ALYS_KIND_FREE && s->nr_frees < MAX_FREES)
		s->frees[s->nr_frees++] = *e;
	else if (e->kind != ALYS_KIND_FREE)
		s->nr_allocs++;
}

static struct trace live;

static void tap(void *ctx, const void *records, size_t len)
{
	(void)ctx;
	if (trace_live_feed(&live, records, len))
		abort();
}

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

int main(void)
{
	static struct record_sink rs;
	struct seen seen = { 0 };
	struct trace_writer_header h = { .pid = 1, .exe = "/prog", .start_ns = 1, .unwind = "dwarf",
				  .max_frames = 16, .sample = "all", .liveness = "marks" };
	struct alys_rb_collection c = { .type = ALYS_RB_COLLECTION, .gc_no = 3, .since = 2,
					.followed = 40, .judged = 3, .dead = 99 };
	const struct trace_event *f;
	__u32 live_state = ALYS_LIVE_VERIFIED;
	char err[256];

	trace_live_begin(&live, "test", on_event, &seen);
	if (trace_writer_open(&rs.w, NULL, (uid_t)-1, (gid_t)-1, err, sizeof(err))) {
		printf("FAIL writer: %s\n", err);
		return 1;
	}
	trace_writer_tap(&rs.w, tap, NULL);
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
	return unit_summary();
}
