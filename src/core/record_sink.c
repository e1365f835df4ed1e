// SPDX-License-Identifier: MIT
#include "core/record_sink.h"

#include <math.h>

/* Bytes an event stands for: the one place the trace's weight is made. A
 * refill stands for the objects the kernel counted in its list. Sampled, a
 * call of s bytes was recorded with probability 1 - exp(-s/N): weighting
 * it by the inverse keeps totals unbiased (as Go's and tcmalloc's heap
 * profiles do). */
static uint64_t event_weight(const struct record_sink *rs, const struct alys_rb_event *e)
{
	double n = (double)rs->sample_bytes;

	if (e->kind == ALYS_KIND_FREE)
		return 0;
	if (e->objects)
		return e->objects * e->size;
	if (!rs->sample_bytes || !e->size)
		return e->size;
	return (uint64_t)llround((double)e->size / -expm1(-(double)e->size / n));
}

static void on_stack(struct record_sink *rs, const void *data, size_t len)
{
	const struct alys_rb_stack *s = data;
	/* __u64 is unsigned long long, uint64_t unsigned long. */
	const uint64_t *ips = (const uint64_t *)s->ips;
	struct stack_new_nodes add;
	uint32_t nr = s->nr;

	if (nr > ALYS_MAX_FRAMES || ALYS_RB_STACK_SIZE(nr) > len)
		return;
	if (!stack_table_record(&rs->stacks, s->flags, s->parent, s->key, ips, nr, &add))
		return;
	if (rs->tool.new_frames)
		rs->tool.new_frames(rs->tool.ctx, add.ips, add.n);
	trace_writer_stack(&rs->w, add.first, add.parent, add.ips, add.n, s->flags);
}

static void on_event(struct record_sink *rs, const void *data, size_t len)
{
	const struct alys_rb_event *e = data;
	uint32_t stack_id = stack_table_event(&rs->stacks, e->stack_key);
	uint64_t old_size = 0;

	(void)len;
	switch (e->kind) {
	case ALYS_KIND_REALLOC:
		old_size = u64_table_take_a(&rs->blocks, e->old_addr);
		u64_table_put(&rs->blocks, e->addr, e->size, e->gc_no);
		break;
	case ALYS_KIND_FREE:
		old_size = u64_table_take_a(&rs->blocks, e->addr);
		break;
	default:
		u64_table_put(&rs->blocks, e->addr, e->size, e->gc_no);
	}
	trace_writer_event(&rs->w, e, stack_id, old_size, event_weight(rs, e));
}

static void on_census(struct record_sink *rs, const void *data, size_t len)
{
	(void)len;
	if (rs->tool.census_stop)
		rs->tool.census_stop(rs->tool.ctx, data);
}

/*
 * A death the BPF side found (bpf/live.h): kept only for a block the trace
 * holds, allocated before the collection whose marks found it clear. The
 * rest are blocks allocated since, in an hblk the scan could not tell
 * apart, or a death found again (its bit kept for a later scan); none
 * should be reported. since becomes the first collection after its
 * allocation where the scan merged collections (a reuse says none).
 */
static bool dated_death(struct record_sink *rs, struct alys_rb_death *d)
{
	struct u64_slot *sl = u64_table_get(&rs->blocks, d->addr);
	uint32_t first;

	if (!sl || (d->cause == ALYS_CAUSE_MARKS && sl->b >= d->gc_no))
		return false;
	first = sl->b + 1;
	if (d->since < first)
		d->since = first;
	if (d->since > d->gc_no)
		d->since = d->gc_no;
	u64_table_remove(&rs->blocks, d->addr);
	return true;
}

static void on_death(struct record_sink *rs, const void *data, size_t len)
{
	struct alys_rb_death d = *(const struct alys_rb_death *)data;

	(void)len;
	if (!dated_death(rs, &d))
		return;
	trace_writer_death(&rs->w, &d);
	rs->deaths++;
	rs->scan_deaths += d.cause == ALYS_CAUSE_MARKS;
	rs->live_reused += d.cause == ALYS_CAUSE_REUSE && rs->live_state &&
			   *rs->live_state == ALYS_LIVE_VERIFIED;
}

static void on_collection(struct record_sink *rs, const void *data, size_t len)
{
	struct alys_rb_collection c = *(const struct alys_rb_collection *)data;

	(void)len;
	/* the deaths kept (dated_death), of which some ambiguous ones were
	 * not counted judged */
	c.dead = rs->scan_deaths;
	if (c.judged < c.dead)
		c.judged = c.dead;
	if (c.followed < c.judged)
		c.followed = c.judged;
	rs->scan_deaths = 0;
	trace_writer_collection(&rs->w, &c);
	rs->collections++;
	rs->end_scanned |= c.at_end;
}

static void on_pause(struct record_sink *rs, const void *data, size_t len)
{
	const struct alys_rb_pause *p = data;

	(void)len;
	trace_writer_pause(&rs->w, p, stack_table_event(&rs->stacks, p->stack_key));
	rs->pauses++;
}

static void on_grow(struct record_sink *rs, const void *data, size_t len)
{
	const struct alys_rb_grow *g = data;

	(void)len;
	trace_writer_grow(&rs->w, g, stack_table_event(&rs->stacks, g->stack_key));
}

/* One handler a record type, and the least a record of it holds. */
static const struct {
	void (*fn)(struct record_sink *rs, const void *data, size_t len);
	size_t min_len;
} handlers[] = {
	[ALYS_RB_EVENT] = { on_event, sizeof(struct alys_rb_event) },
	[ALYS_RB_STACK] = { on_stack, ALYS_RB_STACK_SIZE(0) },
	[ALYS_RB_DEATH] = { on_death, sizeof(struct alys_rb_death) },
	[ALYS_RB_COLLECTION] = { on_collection, sizeof(struct alys_rb_collection) },
	[ALYS_RB_CENSUS] = { on_census, sizeof(struct alys_rb_census) },
	[ALYS_RB_PAUSE] = { on_pause, sizeof(struct alys_rb_pause) },
	[ALYS_RB_GROW] = { on_grow, sizeof(struct alys_rb_grow) },
};

int record_sink_on_record(void *ctx, void *data, size_t len)
{
	uint8_t type = len ? *(const uint8_t *)data : 0;

	if (type < sizeof(handlers) / sizeof(handlers[0]) && handlers[type].fn &&
	    len >= handlers[type].min_len)
		handlers[type].fn(ctx, data, len);
	return 0;
}

bool record_sink_holds(const struct record_sink *rs, uint64_t addr)
{
	return u64_table_get_a(&rs->blocks, addr) != 0;
}

void record_sink_free(struct record_sink *rs)
{
	stack_table_free(&rs->stacks);
	u64_table_free(&rs->blocks);
}
