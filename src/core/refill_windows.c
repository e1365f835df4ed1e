// SPDX-License-Identifier: MIT
#include "core/refill_windows.h"

#include "base/clock_ns.h"

static int attach(struct refill_windows *rw, bool with_realloc)
{
	rw->nlinks = 0;
	rw->has_realloc = with_realloc;
	return rw->attach(rw->attach_ctx, with_realloc, rw->links, &rw->nlinks);
}

static void *attacher(void *arg)
{
	struct refill_windows *rw = arg;

	rw->attach_err = attach(rw, rw->attach_with_realloc);
	return NULL;
}

/* A window's probes, attached on a thread of their own (refill_windows.h);
 * attached here if no thread can be made. */
static int attach_start(struct refill_windows *rw, bool with_realloc)
{
	rw->attach_with_realloc = with_realloc;
	rw->detach_due = false;
	if (pthread_create(&rw->attacher, NULL, attacher, rw)) {
		attacher(rw);
		return rw->attach_err;
	}
	rw->attaching = true;
	return 0;
}

/* Whether the attacher is done (joined): its result in rw->attach_err. */
static bool attach_done(struct refill_windows *rw, bool wait)
{
	if (!rw->attaching)
		return true;
	if (wait ? pthread_join(rw->attacher, NULL) : pthread_tryjoin_np(rw->attacher, NULL))
		return false;
	rw->attaching = false;
	return true;
}

/* In the background: the next window waits until they are gone. */
static void detach(struct refill_windows *rw)
{
	if (rw->attaching) {		/* detached once attached */
		rw->detach_due = true;
		return;
	}
	link_reaper_start(&rw->reaper, rw->links, rw->nlinks);
	for (int i = 0; i < rw->nlinks; i++)
		rw->links[i] = (struct probe_link){ NULL, -1 };
	rw->nlinks = 0;
}

/*
 * A window's bounds are set here, each just before a reading of the
 * collector's count: events inside it stand for that count's growth while
 * it was open, whatever tracing did to the program's speed meanwhile. The
 * bound first, then the reading, at both ends: a system call's return is
 * where the scheduler switches tasks, and a reading taken before the bound
 * would count whatever the program allocated while the daemon was switched
 * out on its way back, with none of its events.
 */
static bool open_window(struct refill_windows *rw)
{
	uint64_t ignored;

	/* the first reading finds libgc's load bias: not inside the window */
	if (!gc_count_read(&rw->count, &ignored))
		return false;
	*rw->bpf_until = UINT64_MAX;
	*rw->bpf_from = clock_ns(CLOCK_MONOTONIC);
	if (!gc_count_read(&rw->count, &rw->start_bytes)) {
		*rw->bpf_from = UINT64_MAX;
		return false;
	}
	rw->open = true;
	return true;
}

static void close_window(struct refill_windows *rw)
{
	uint64_t end;

	if (!rw->open)
		return;
	*rw->bpf_until = clock_ns(CLOCK_MONOTONIC);
	rw->open = false;
	if (gc_count_read(&rw->count, &end) && end >= rw->start_bytes) {
		rw->bytes_in += end - rw->start_bytes;
		if (rw->has_realloc)
			rw->bytes_in_realloc += end - rw->start_bytes;
	} else {
		rw->duty.late++;	/* the window cannot be counted */
	}
}

int refill_windows_start(struct refill_windows *rw, uint64_t now)
{
	if (rw->duty_pct >= 100)
		return attach(rw, true);
	duty_cycle_init(&rw->duty, rw->duty_pct, now);
	if (gc_count_read(&rw->count, &rw->trace_start_bytes))
		return 0;
	/* A command launched for the trace: libgc not mapped yet, and the
	 * count starts at 0. */
	rw->trace_start_bytes = 0;
	return rw->launched ? 0 : -1;
}

/* The attacher finished: open the window, or detach at once if it ended
 * meanwhile (a window that cannot be counted). */
static int attached(struct refill_windows *rw)
{
	if (rw->attach_err)
		return -1;
	if (rw->detach_due) {
		rw->duty.late++;
		detach(rw);
		return 0;
	}
	/* Open at once: attached probes trap whether recording or not. */
	if (!open_window(rw))
		rw->duty.late++;
	return 0;
}

int refill_windows_step(struct refill_windows *rw, uint64_t now)
{
	int timeout = 50;

	if (rw->duty_pct >= 100)
		return timeout;
	if (rw->attaching && attach_done(rw, false) && attached(rw))
		return -1;
	switch (duty_cycle_step(&rw->duty, now, &timeout)) {
	case DUTY_ATTACH:
		/* The last window's probes still going, or still coming: two
		 * links on one instruction would record its calls twice. */
		if (rw->attaching || link_reaper_busy(&rw->reaper)) {
			rw->duty.late++;
			duty_cycle_skip(&rw->duty, now);
			break;
		}
		/* Closed until opened once attached. */
		*rw->bpf_from = UINT64_MAX;
		*rw->bpf_until = UINT64_MAX;
		/* GC_realloc traps ~4x as often as the refills on the HTTP
		 * benchmark: probed in one window of DUTY_REALLOC_EVERY. */
		if (attach_start(rw, rw->duty.windows % DUTY_REALLOC_EVERY == 1))
			return -1;
		if (!rw->attaching && attached(rw))
			return -1;
		break;
	case DUTY_DETACH:
		close_window(rw);
		detach(rw);
		break;
	case DUTY_NONE:
		break;
	}
	/* polled while attaching: the window opens when it is done */
	if (rw->attaching && timeout > 5)
		timeout = 5;
	return timeout < 50 ? timeout : 50;
}

void refill_windows_poll(struct refill_windows *rw)
{
	uint64_t ignored;

	if (rw->open)
		gc_count_read(&rw->count, &ignored);
}

void refill_windows_stop(struct refill_windows *rw)
{
	attach_done(rw, true);
	close_window(rw);
	detach(rw);
	link_reaper_wait(&rw->reaper);
}

void refill_windows_totals(struct refill_windows *rw, uint64_t *all, uint64_t *in,
			   uint64_t *in_realloc)
{
	uint64_t now = 0;
	uint64_t open = 0;

	*all = gc_count_read(&rw->count, &now) && now >= rw->trace_start_bytes ?
	       now - rw->trace_start_bytes : 0;
	/* A window still open counts so far: its events are in the trace
	 * already (a live profile reads both mid-run). */
	if (rw->open && now >= rw->start_bytes)
		open = now - rw->start_bytes;
	*in = rw->bytes_in + open;
	*in_realloc = rw->bytes_in_realloc + (rw->has_realloc ? open : 0);
}
