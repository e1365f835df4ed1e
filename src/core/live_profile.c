// SPDX-License-Identifier: MIT
#include "core/live_profile.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "profile/alloc_tally.h"
#include "profile/gc_pauses.h"
#include "profile/model.h"
#include "profile/pprof.h"
#include "profile/symbolize.h"
#include "profile/trace.h"
#include "lib/u64_table.h"
#include "lib/util.h"

struct live_totals {
	size_t nr_stacks;
	struct alloc_stats *by_stack;	/* [1..nr_stacks] */
	uint8_t *realloc;		/* [1..nr_stacks]: counted GC_realloc events */
	struct alloc_stats lost[ALYS_KIND_REALLOC + 1];
	bool duty;			/* weights as recorded: divide by the share */
	uint64_t unix_ns;		/* when copied */
	struct trace_duty_bytes bytes;	/* the collector's, at this moment */
};

struct live_profile {
	/* the reading and the counts: the feeding thread, and copies */
	pthread_mutex_t lock;
	struct trace t;
	bool failed;
	struct alloc_tally tally;	/* counted as model_build counts */
	uint64_t pause_in[LIVE_PAUSE_BUCKETS];	/* pauses in (le[i-1], le[i]] */
	uint64_t pauses, pause_ns;
	uint64_t grows, grown_bytes;
	/* the pauses since the last window (the agent's pushes), at most
	 * LIVE_WINDOW_PAUSES: beyond, counted in win_pauses_lost */
	struct win_pause { uint32_t stack; uint64_t ns; } *win_pauses;
	size_t nr_win_pauses, cap_win_pauses;
	uint64_t win_pauses_lost;

	/* a reader waiting for what the ring buffer holds (catch_up) */
	int wake_fd;
	pthread_cond_t caught_up;
	uint64_t wanted, done;
	bool detached;			/* nothing more will come */

	/* rendering, one at a time: a copy of the trace's tables (append
	 * only) that the symbolizer reads without the lock */
	pthread_mutex_t render;
	struct trace view;
	size_t cap_maps, cap_stacks, cap_nodes;
	struct symbolizer *sym;
};

static void count_event(struct live_profile *lp, const struct trace_event *e)
{
	struct counted_block old;

	alloc_tally_release(&lp->tally, &lp->t, e, &old);
	if (event_allocates(e))
		alloc_tally_add(&lp->tally, &lp->t, e);
}

struct live_profile *live_profile_new(const char *name)
{
	struct live_profile *lp = xcalloc(1, sizeof(*lp));

	pthread_mutex_init(&lp->lock, NULL);
	pthread_mutex_init(&lp->render, NULL);
	pthread_cond_init(&lp->caught_up, NULL);
	lp->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	trace_build_begin(&lp->t, xasprintf("%s", name));
	alloc_tally_init(&lp->tally);
	return lp;
}

void live_profile_free(struct live_profile *lp)
{
	if (!lp)
		return;
	symbolizer_free(lp->sym);
	/* the view's strings are the trace's */
	free(lp->view.maps);
	free(lp->view.stacks);
	free(lp->view.nodes);
	free((char *)lp->t.path);
	free(lp->win_pauses);
	trace_free(&lp->t);
	alloc_tally_free(&lp->tally);
	pthread_mutex_destroy(&lp->lock);
	pthread_mutex_destroy(&lp->render);
	pthread_cond_destroy(&lp->caught_up);
	if (lp->wake_fd >= 0)
		close(lp->wake_fd);
	free(lp);
}

/* A record the trace refused (trace_put_* said why): counting stops
 * there. Under lp->lock; said once, after it. */
static bool refused(struct live_profile *lp, int err)
{
	if (!err)
		return false;
	lp->failed = true;
	return true;
}

static void say_refused(void)
{
	fail("the live profile stopped counting (a record it could not take: "
	     "please report); the trace file is not affected\n");
}

/* Each handler takes the record under the lock, into the trace (and an
 * event into the counts), unless a record was refused before. */
#define TAKE(lp, call)							\
	do {								\
		bool said;						\
									\
		pthread_mutex_lock(&(lp)->lock);			\
		said = !(lp)->failed && refused((lp), (call));		\
		pthread_mutex_unlock(&(lp)->lock);			\
		if (said)						\
			say_refused();					\
	} while (0)

static void on_header(void *ctx, const struct trace_header *h)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_header(&lp->t, h));
}

static void on_mapping(void *ctx, const struct trace_mapping *m)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_mapping(&lp->t, m));
}

static void on_stack_nodes(void *ctx, uint32_t first, uint32_t parent, const uint64_t *ips,
			   uint32_t nr, uint32_t flags)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_nodes(&lp->t, first, parent, ips, nr, flags));
}

static int put_and_count(struct live_profile *lp, struct trace_event *e, uint32_t stack_id,
			 bool death)
{
	int err = death ? trace_put_death(&lp->t, e) : trace_put_event(&lp->t, e, stack_id);

	if (!err)
		count_event(lp, e);
	return err;
}

static void on_event(void *ctx, const struct trace_event *e, uint32_t stack_id)
{
	struct live_profile *lp = ctx;
	struct trace_event ev = *e;

	TAKE(lp, put_and_count(lp, &ev, stack_id, false));
}

static void on_death(void *ctx, const struct trace_event *e)
{
	struct live_profile *lp = ctx;
	struct trace_event ev = *e;

	TAKE(lp, put_and_count(lp, &ev, 0, true));
}

static void on_collection(void *ctx, const struct trace_collection *c)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_collection(&lp->t, c));
}

const double live_pause_le[LIVE_PAUSE_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 1, INFINITY,
};

static int put_pause(struct live_profile *lp, const struct trace_pause *p, uint32_t stack_id)
{
	struct trace_pause pp = *p;
	uint64_t ns = p->start_ns - p->stop_ns;
	size_t i = 0;

	if (trace_put_pause(&lp->t, &pp, stack_id))
		return -1;
	if (lp->nr_win_pauses < LIVE_WINDOW_PAUSES) {
		lp->win_pauses = grow_array(lp->win_pauses, &lp->cap_win_pauses,
					    lp->nr_win_pauses + 1, sizeof(*lp->win_pauses));
		lp->win_pauses[lp->nr_win_pauses++] = (struct win_pause){ pp.stack, ns };
	} else {
		lp->win_pauses_lost++;
	}
	while (i + 1 < LIVE_PAUSE_BUCKETS && (double)ns > live_pause_le[i] * 1e9)
		i++;
	lp->pause_in[i]++;
	lp->pauses++;
	lp->pause_ns += ns;
	return 0;
}

static void on_pause(void *ctx, const struct trace_pause *p, uint32_t stack_id)
{
	struct live_profile *lp = ctx;

	TAKE(lp, put_pause(lp, p, stack_id));
}

static void on_memory(void *ctx, const struct trace_memory *m)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_memory(&lp->t, m));
}

static int put_grow(struct live_profile *lp, const struct trace_grow *g, uint32_t stack_id)
{
	struct trace_grow gg = *g;

	if (trace_put_grow(&lp->t, &gg, stack_id))
		return -1;
	lp->grows++;
	lp->grown_bytes += g->bytes;
	return 0;
}

static void on_grow(void *ctx, const struct trace_grow *g, uint32_t stack_id)
{
	struct live_profile *lp = ctx;

	TAKE(lp, put_grow(lp, g, stack_id));
}

static void on_census(void *ctx, const struct trace_census *c,
		      const struct trace_census_type *types)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_census(&lp->t, c, types));
}

static void on_counters(void *ctx, const struct trace_counter *c, size_t n)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_counters(&lp->t, c, n));
}

static void on_end(void *ctx, const struct trace_end *e)
{
	struct live_profile *lp = ctx;

	TAKE(lp, trace_put_end(&lp->t, e));
}

const struct trace_tool live_profile_tool = {
	.header = on_header,
	.mapping = on_mapping,
	.stack_nodes = on_stack_nodes,
	.event = on_event,
	.death = on_death,
	.collection = on_collection,
	.pause = on_pause,
	.memory = on_memory,
	.grow = on_grow,
	.census = on_census,
	.counters = on_counters,
	.end = on_end,
};

static uint64_t clock_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Slots of the tally to read: the trace's stacks (+ 1), those counted. */
static size_t counted_slots(const struct live_profile *lp)
{
	return lp->t.nr_stacks < lp->tally.nr_stacks ? lp->t.nr_stacks + 1 : lp->tally.nr_stacks;
}

static struct live_totals *copy_totals(const struct live_profile *lp)
{
	struct live_totals *c = xcalloc(1, sizeof(*c));
	size_t n = counted_slots(lp);

	/* the stacks counted so far; the rest are zero */
	c->nr_stacks = lp->t.nr_stacks;
	c->by_stack = xcalloc(c->nr_stacks + 1, sizeof(*c->by_stack));
	c->realloc = xcalloc(c->nr_stacks + 1, 1);
	if (n) {
		memcpy(c->by_stack, lp->tally.by_stack, n * sizeof(*c->by_stack));
		memcpy(c->realloc, lp->tally.realloc, n);
	}
	memcpy(c->lost, lp->tally.lost, sizeof(c->lost));
	c->duty = trace_is_duty_cycled(&lp->t);
	c->unix_ns = clock_unix_ns();
	trace_duty_bytes(&lp->t, &c->bytes);
	return c;
}

int live_profile_wake_fd(const struct live_profile *lp)
{
	return lp->wake_fd;
}

bool live_profile_wanted(struct live_profile *lp)
{
	uint64_t n;
	bool want;

	if (lp->wake_fd >= 0 && read(lp->wake_fd, &n, sizeof(n)) < 0)
		n = 0;		/* nothing to read: it was polled, not woken */
	pthread_mutex_lock(&lp->lock);
	want = lp->wanted > lp->done;
	pthread_mutex_unlock(&lp->lock);
	return want;
}

void live_profile_caught_up(struct live_profile *lp)
{
	pthread_mutex_lock(&lp->lock);
	lp->done = lp->wanted;
	pthread_cond_broadcast(&lp->caught_up);
	pthread_mutex_unlock(&lp->lock);
}

void live_profile_detached(struct live_profile *lp)
{
	pthread_mutex_lock(&lp->lock);
	lp->detached = true;
	pthread_cond_broadcast(&lp->caught_up);
	pthread_mutex_unlock(&lp->lock);
}

/* What the ring buffer held when asked is read, or a second has passed.
 * Under lp->lock. */
static void catch_up(struct live_profile *lp)
{
	uint64_t want = ++lp->wanted, one = 1;
	struct timespec until;

	if (lp->detached || lp->wake_fd < 0 || write(lp->wake_fd, &one, sizeof(one)) < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	while (lp->done < want && !lp->detached &&
	       !pthread_cond_timedwait(&lp->caught_up, &lp->lock, &until))
		;
}

struct live_totals *live_profile_totals(struct live_profile *lp)
{
	struct live_totals *c;

	pthread_mutex_lock(&lp->lock);
	catch_up(lp);
	c = copy_totals(lp);
	pthread_mutex_unlock(&lp->lock);
	return c;
}

void live_totals_free(struct live_totals *tot)
{
	if (!tot)
		return;
	free(tot->by_stack);
	free(tot->realloc);
	free(tot);
}

/* Append what the trace gained since the last copy; under lp->lock. */
static void sync_view(struct live_profile *lp)
{
	const struct trace *t = &lp->t;
	struct trace *v = &lp->view;

	v->path = t->path;
	v->hdr = t->hdr;
	v->liveness = t->liveness;
	if (t->nr_maps > v->nr_maps) {
		v->maps = grow_array(v->maps, &lp->cap_maps, t->nr_maps, sizeof(*v->maps));
		memcpy(&v->maps[v->nr_maps], &t->maps[v->nr_maps],
		       (t->nr_maps - v->nr_maps) * sizeof(*v->maps));
		v->nr_maps = t->nr_maps;
	}
	if (t->nr_stacks > v->nr_stacks) {
		v->stacks = grow_array(v->stacks, &lp->cap_stacks, t->nr_stacks, sizeof(*v->stacks));
		memcpy(&v->stacks[v->nr_stacks], &t->stacks[v->nr_stacks],
		       (t->nr_stacks - v->nr_stacks) * sizeof(*v->stacks));
		v->nr_stacks = t->nr_stacks;
	}
	if (t->nr_nodes > v->nr_nodes) {
		v->nodes = grow_array(v->nodes, &lp->cap_nodes, t->nr_nodes, sizeof(*v->nodes));
		memcpy(&v->nodes[v->nr_nodes], &t->nodes[v->nr_nodes],
		       (t->nr_nodes - v->nr_nodes) * sizeof(*v->nodes));
		v->nr_nodes = t->nr_nodes;
	}
}

/* The --duty windows' share of the collector's bytes over the period
 * shown (1: not duty-cycled): its own when it has windows, else that of
 * the whole trace so far, as the converter divides by at the end. */
static void period_shares(const struct live_totals *now, const struct live_totals *before,
			  double *share, double *share_realloc)
{
	struct trace_duty_bytes d = now->bytes;

	*share = *share_realloc = 1;
	if (!now->duty)
		return;
	trace_duty_shares(&now->bytes, share, share_realloc);
	if (!before)
		return;
	d.all -= before->bytes.all;
	d.in -= before->bytes.in;
	d.in_realloc -= before->bytes.in_realloc;
	if (d.in && d.in_realloc)
		trace_duty_shares(&d, share, share_realloc);
	else if (d.in)		/* no realloc window in the period */
		trace_duty_shares(&d, share, &(double){ 0 });
}

static uint64_t scaled(uint64_t v, double share)
{
	double x = (double)(int64_t)v / share;

	/* as trace.c's duty_weight: a hostile share cannot overflow sums */
	return x < 1e15 && x > -1e15 ? (uint64_t)(int64_t)llround(x)
				     : (uint64_t)(int64_t)(x < 0 ? -1e15 : 1e15);
}

/* now - before (every value: a delta as Go's), divided by the share. */
static struct alloc_stats period_stats(const struct alloc_stats *now,
				       const struct alloc_stats *before, double share)
{
	struct alloc_stats s = *now;

	if (before) {
		s.alloc_objects -= before->alloc_objects;
		s.alloc_space -= before->alloc_space;
		s.inuse_objects -= before->inuse_objects;
		s.inuse_space -= before->inuse_space;
	}
	if (share != 1) {
		s.alloc_objects = scaled(s.alloc_objects, share);
		s.alloc_space = scaled(s.alloc_space, share);
		s.inuse_objects = scaled(s.inuse_objects, share);
		s.inuse_space = scaled(s.inuse_space, share);
	}
	return s;
}

/* The model's buckets (model_nr_buckets of a trace of now->nr_stacks
 * stacks) of now - before (NULL: since the start), each divided by its
 * share: what every reader of the totals shows. */
static struct alloc_stats *period_buckets(const struct live_totals *now,
					  const struct live_totals *before)
{
	struct alloc_stats *stats = xcalloc(now->nr_stacks + 1 + ALYS_KIND_REALLOC, sizeof(*stats));
	double share, share_realloc;

	period_shares(now, before, &share, &share_realloc);
	for (size_t s = 1; s <= now->nr_stacks; s++)
		stats[s] = period_stats(&now->by_stack[s], before && s <= before->nr_stacks ?
					&before->by_stack[s] : NULL,
					now->realloc[s] ? share_realloc : share);
	for (unsigned int k = ALYS_KIND_MALLOC; k <= ALYS_KIND_REALLOC; k++)
		stats[now->nr_stacks + k] = period_stats(&now->lost[k],
							 before ? &before->lost[k] : NULL,
							 k == ALYS_KIND_REALLOC ? share_realloc : share);
	return stats;
}

/* A pushed window: allocations over [before, now], what is in use at now
 * (a delta of the in-use values would be negative where blocks died). */
static struct alloc_stats *window_buckets(const struct live_totals *now,
					  const struct live_totals *before)
{
	struct alloc_stats *stats = period_buckets(now, before);
	struct alloc_stats *whole = period_buckets(now, NULL);

	for (size_t b = 1; b <= now->nr_stacks + ALYS_KIND_REALLOC; b++) {
		stats[b].inuse_objects = whole[b].inuse_objects;
		stats[b].inuse_space = whole[b].inuse_space;
	}
	free(whole);
	return stats;
}

/* Takes lp->render (end_render gives it back): the view brought up to
 * date and the totals at this moment (after the feeding thread caught up,
 * if wait), which are returned. */
/* pauses: NULL, or where the window's pauses go (taken with the view
 * they name stacks of). */
static struct live_totals *begin_render_taking(struct live_profile *lp, bool wait,
					       struct gc_pause_summary *pauses)
{
	struct live_totals *now;

	pthread_mutex_lock(&lp->render);
	pthread_mutex_lock(&lp->lock);
	if (wait)
		catch_up(lp);
	sync_view(lp);
	now = copy_totals(lp);	/* of the view's stacks: copied together */
	if (pauses) {
		pauses->n = lp->nr_win_pauses;
		pauses->rows = xcalloc(pauses->n + 1, sizeof(*pauses->rows));
		for (size_t i = 0; i < pauses->n; i++) {
			pauses->rows[i].bucket = trace_bucket(&lp->view, lp->win_pauses[i].stack,
							      ALYS_KIND_MALLOC);
			pauses->rows[i].ns = lp->win_pauses[i].ns;
		}
		lp->nr_win_pauses = 0;
	}
	pthread_mutex_unlock(&lp->lock);
	return now;
}

static struct live_totals *begin_render(struct live_profile *lp, bool wait)
{
	return begin_render_taking(lp, wait, NULL);
}

/* Under lp->render: the model of now minus before, if given (a window:
 * in use at now), named by the view's symbolizer. */
static void render_model(struct live_profile *lp, struct model *m, const struct live_totals *now,
			 const struct live_totals *before, bool window)
{
	struct symbolizer_options opt = { .want_dwarf = true,
					  .live_pid = (pid_t)lp->view.hdr.pid };
	struct alloc_stats *stats;

	if (!lp->sym)
		lp->sym = symbolizer_new(&lp->view, &opt);
	symbolizer_maps_grew(lp->sym);
	stats = window ? window_buckets(now, before) : period_buckets(now, before);
	model_from_buckets(m, &lp->view, lp->sym, stats, 0);
	free(stats);
}

/* m: NULL when no model was made. */
static void end_render(struct live_profile *lp, struct model *m, struct live_totals *now)
{
	if (m)
		model_free(m);
	live_totals_free(now);
	pthread_mutex_unlock(&lp->render);
}

/* Whether the --duty windows saw any of the period since before: a
 * period they missed has nothing to divide its (no) events by. */
static bool period_covered(const struct live_totals *now, const struct live_totals *before)
{
	return !now->duty || now->bytes.in > (before ? before->bytes.in : 0);
}

void live_profile_pprof(struct live_profile *lp, const struct live_totals *before, bool heap,
			struct outbuf *o)
{
	struct output_options opt = { .live_view = heap };
	struct live_totals *now;
	struct model m;

	now = begin_render(lp, true);
	render_model(lp, &m, now, before, false);
	/* a delta covers [before, now]; else the trace's start to now */
	if (before) {
		opt.time_unix_ns = before->unix_ns;
		opt.duration_ns = now->unix_ns - before->unix_ns;
	} else if (lp->view.hdr.start_unix_ns && now->unix_ns > lp->view.hdr.start_unix_ns) {
		opt.duration_ns = now->unix_ns - lp->view.hdr.start_unix_ns;
	}
	write_pprof(&m, o, &opt);
	end_render(lp, &m, now);
}

/* One of a window's profiles within lim: the samples halved until it
 * fits (or one is left: the "[other stacks]" sum). */
static struct pprof_counts encode_within(struct model *m, struct output_options *opt,
					 const struct window_limits *lim, struct outbuf *o)
{
	size_t start = o->len;
	struct pprof_counts c;

	opt->max_samples = lim->max_samples;
	for (;;) {
		pprof_encode(m, o, opt, &c);
		if (!lim->max_bytes || c.bytes <= lim->max_bytes || opt->max_samples == 1)
			return c;
		o->len = start;
		if (!opt->max_samples || opt->max_samples > m->nr_buckets)
			opt->max_samples = (uint32_t)(m->nr_buckets < UINT32_MAX ? m->nr_buckets :
									  UINT32_MAX);
		opt->max_samples = opt->max_samples > 2 ? opt->max_samples / 2 : 1;
	}
}

/* Under lp->lock: a window not sent gives its pauses back, first. Their
 * buckets are the view's; the stacks they name are the trace's too. */
static void put_back_pauses(struct live_profile *lp, const struct gc_pause_summary *ps)
{
	size_t keep = lp->nr_win_pauses, n = ps->n;

	if (n + keep > LIVE_WINDOW_PAUSES) {
		lp->win_pauses_lost += n + keep - LIVE_WINDOW_PAUSES;
		n = LIVE_WINDOW_PAUSES - keep;
	}
	lp->win_pauses = grow_array(lp->win_pauses, &lp->cap_win_pauses, keep + n + 1,
				    sizeof(*lp->win_pauses));
	memmove(lp->win_pauses + n, lp->win_pauses, keep * sizeof(*lp->win_pauses));
	for (size_t i = 0; i < n; i++)
		lp->win_pauses[i] = (struct win_pause){
			ps->rows[i].bucket <= lp->view.nr_stacks ? (uint32_t)ps->rows[i].bucket : 0,
			ps->rows[i].ns };
	lp->nr_win_pauses = keep + n;
}

struct live_totals *live_profile_window(struct live_profile *lp, const struct live_totals *before,
				       bool last, const struct window_limits *lim,
				       struct window_profiles *out)
{
	struct output_options opt = { .pprof_values = PPROF_ALLOC };
	struct live_totals *now;
	struct pprof_counts alloc, inuse, pauses = { 0 };
	struct gc_pause_summary ps = { 0 };
	struct model m;

	now = begin_render_taking(lp, true, &ps);
	if (!last && !period_covered(now, before)) {
		/* the pauses go with the next window, which covers them */
		pthread_mutex_lock(&lp->lock);
		put_back_pauses(lp, &ps);
		pthread_mutex_unlock(&lp->lock);
		gc_pauses_free(&ps);
		end_render(lp, NULL, now);
		return NULL;
	}
	render_model(lp, &m, now, before, true);
	out->start_unix_ns = before ? before->unix_ns : lp->view.hdr.start_unix_ns;
	out->end_unix_ns = now->unix_ns;
	opt.time_unix_ns = out->start_unix_ns;
	opt.duration_ns = out->end_unix_ns > out->start_unix_ns ?
			  out->end_unix_ns - out->start_unix_ns : 1;
	alloc = encode_within(&m, &opt, lim, &out->alloc);
	opt = (struct output_options){ .pprof_values = PPROF_INUSE, .live_view = true,
				       .time_unix_ns = out->end_unix_ns, .instant = true };
	inuse = encode_within(&m, &opt, lim, &out->inuse);
	if (ps.n) {
		/* the model's buckets hold the pauses now: the last profile */
		gc_pauses_as_buckets(&m, &ps);
		opt = (struct output_options){ .pprof_values = PPROF_PAUSES,
					       .time_unix_ns = out->start_unix_ns,
					       .duration_ns = out->end_unix_ns > out->start_unix_ns ?
							      out->end_unix_ns - out->start_unix_ns : 1 };
		pauses = encode_within(&m, &opt, lim, &out->pauses);
	}
	gc_pauses_free(&ps);
	out->samples_cut = (uint32_t)(alloc.merged > inuse.merged ? alloc.merged : inuse.merged);
	if (pauses.merged > out->samples_cut)
		out->samples_cut = (uint32_t)pauses.merged;
	out->alloc_samples = alloc.samples;
	out->inuse_samples = inuse.samples;
	out->pause_samples = pauses.samples;
	end_render(lp, &m, NULL);
	return now;
}

static int by_live_bytes(const void *a, const void *b)
{
	const struct model_site *x = *(const struct model_site *const *)a;
	const struct model_site *y = *(const struct model_site *const *)b;

	if (x->s.inuse_space != y->s.inuse_space)
		return x->s.inuse_space < y->s.inuse_space ? 1 : -1;
	return strcmp(x->name, y->name);
}

void live_profile_print_sites(struct live_profile *lp, FILE *out, unsigned top,
			      double elapsed_s)
{
	const struct model_site **rows;
	struct live_totals *now;
	uint32_t gc_no;
	struct model m;

	/* the feeding thread itself, which flushed just before */
	now = begin_render(lp, false);
	render_model(lp, &m, now, NULL, false);
	pthread_mutex_lock(&lp->lock);
	gc_no = lp->t.nr_collections ? lp->t.collections[lp->t.nr_collections - 1].gc_no : 0;
	pthread_mutex_unlock(&lp->lock);
	rows = xcalloc(m.nr_sites ? m.nr_sites : 1, sizeof(*rows));
	for (size_t i = 0; i < m.nr_sites; i++)
		rows[i] = &m.sites[i];
	qsort(rows, m.nr_sites, sizeof(*rows), by_live_bytes);
	fprintf(out, "%s: [%.1f s] live after collection %u: %" PRIu64 " bytes in %" PRIu64
		" blocks; top sites by live bytes:\n", prog_name, elapsed_s, gc_no,
		m.total.inuse_space, m.total.inuse_objects);
	for (size_t i = 0; i < m.nr_sites && i < top && rows[i]->s.inuse_space; i++)
		fprintf(out, "  %12" PRIu64 " bytes %9" PRIu64 " blocks  %s\n",
			rows[i]->s.inuse_space, rows[i]->s.inuse_objects, rows[i]->name);
	fflush(out);
	free(rows);
	end_render(lp, &m, now);
}

void live_profile_metrics(struct live_profile *lp, bool wait, struct live_metrics *out)
{
	struct alloc_stats all = { 0 }, *stats;
	struct live_totals *now;

	pthread_mutex_lock(&lp->lock);
	if (wait)
		catch_up(lp);
	now = copy_totals(lp);
	*out = (struct live_metrics){
		.events = lp->t.nr_events,
		.stacks = lp->t.nr_stacks,
		.failed = lp->failed,
		.pauses = lp->pauses,
		.pause_ns = lp->pause_ns,
		.has_memory = lp->t.nr_memory > 0,
		.grows = lp->grows,
		.grown_bytes = lp->grown_bytes,
		.pauses_unpushed = lp->win_pauses_lost,
	};
	if (out->has_memory)
		out->memory = lp->t.memory[lp->t.nr_memory - 1];
	for (size_t i = 0; i < LIVE_PAUSE_BUCKETS; i++)
		out->pause_le[i] = (i ? out->pause_le[i - 1] : 0) + lp->pause_in[i];
	pthread_mutex_unlock(&lp->lock);
	/* the buckets a profile shows, added up */
	stats = period_buckets(now, NULL);
	for (size_t b = 1; b <= now->nr_stacks + ALYS_KIND_REALLOC; b++)
		alloc_stats_add(&all, &stats[b]);
	out->alloc_objects = all.alloc_objects;
	out->alloc_space = all.alloc_space;
	out->inuse_objects = all.inuse_objects;
	out->inuse_space = all.inuse_space;
	free(stats);
	live_totals_free(now);
}

void live_profile_each_counter(struct live_profile *lp,
			       void (*fn)(void *ctx, const char *name, uint64_t value),
			       void *ctx)
{
	pthread_mutex_lock(&lp->lock);
	for (size_t i = 0; i < lp->t.nr_counters; i++)
		fn(ctx, lp->t.counters[i].name.ptr, lp->t.counters[i].value);
	pthread_mutex_unlock(&lp->lock);
}

struct counter_find {
	const char *want;
	uint64_t value;
};

static void find_counter(void *ctx, const char *name, uint64_t value)
{
	struct counter_find *f = ctx;

	if (!strcmp(name, f->want))
		f->value = value;
}

uint64_t live_profile_counter(struct live_profile *lp, const char *name)
{
	struct counter_find f = { name, 0 };

	live_profile_each_counter(lp, find_counter, &f);
	return f.value;
}
