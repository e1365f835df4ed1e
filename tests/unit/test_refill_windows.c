// SPDX-License-Identifier: MIT
/*
 * Unit test of --duty's windows (src/core/refill_windows.c): attaching a
 * window's probes runs on a thread of its own, so that a slow attach
 * (50-800 ms measured with nine busy Crystal processes sharing libgc.so)
 * never holds up the caller's loop, which reads every session's ring
 * buffer. Attaching is a stub that sleeps; the collector's count a stub
 * that grows with time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "base/clock_ns.h"
#include "core/refill_windows.h"
#include "unit_check.h"

/* The stubs: no process, no BPF. */
static uint64_t count_start;

void gc_count_init(struct gc_count *c, pid_t pid, const struct gc_probes *gp)
{
	(void)gp;
	memset(c, 0, sizeof(*c));
	c->pid = pid;
}

bool gc_count_read(struct gc_count *c, uint64_t *total)
{
	/* a byte a microsecond */
	*total = c->last = (clock_ns(CLOCK_MONOTONIC) - count_start) / 1000;
	return true;
}

int bpf_link__destroy(struct bpf_link *link)
{
	(void)link;
	return 0;
}

struct fake_attach {
	unsigned sleep_ms;
	int result;
	int calls;
};

static int slow_attach(void *ctx, bool with_realloc, struct probe_link *links, int *n)
{
	struct fake_attach *f = ctx;

	(void)with_realloc;
	(void)links;
	usleep(f->sleep_ms * 1000);
	f->calls++;
	*n = 0;
	return f->result;
}

struct run {
	uint64_t longest_step_ns;
	int opened, closed, failed;
	uint64_t late, windows;
	uint64_t first_open_after_ns;	/* from the window's planned start */
};

/* Steps the windows for secs seconds as a loop would, timing each step. */
static struct run run(struct fake_attach *f, unsigned duty, double secs)
{
	__u64 from = 0, until = 0, last_from = 0, last_until = 0;
	struct refill_windows rw = {
		.duty_pct = duty, .attach = slow_attach, .attach_ctx = f,
		.bpf_from = &from, .bpf_until = &until,
	};
	struct run r = { 0 };
	uint64_t start = clock_ns(CLOCK_MONOTONIC), now;

	gc_count_init(&rw.count, getpid(), NULL);
	if (refill_windows_start(&rw, start)) {
		r.failed = 1;
		return r;
	}
	while ((now = clock_ns(CLOCK_MONOTONIC)) - start < secs * 1e9) {
		uint64_t planned = rw.duty.window_from, t0 = now, t1;
		int timeout = refill_windows_step(&rw, now);

		t1 = clock_ns(CLOCK_MONOTONIC);
		if (t1 - t0 > r.longest_step_ns)
			r.longest_step_ns = t1 - t0;
		if (timeout < 0) {
			r.failed = 1;
			break;
		}
		if (from != last_from && from != UINT64_MAX) {
			if (!r.opened)
				r.first_open_after_ns = from > planned ? from - planned : 0;
			r.opened++;
		}
		if (until != last_until && until != UINT64_MAX)
			r.closed++;
		last_from = from;
		last_until = until;
		usleep((timeout > 0 ? timeout : 1) * 1000);
	}
	refill_windows_stop(&rw);
	r.late = rw.duty.late;
	r.windows = rw.duty.windows;
	return r;
}

int main(void)
{
	char what[256];
	struct fake_attach quick = { .sleep_ms = 0 }, slow = { .sleep_ms = 250 },
			   slower = { .sleep_ms = 700 }, broken = { .sleep_ms = 50, .result = -1 };
	struct run r;

	count_start = clock_ns(CLOCK_MONOTONIC);

	/* 50%: a 520 ms window every 1.04 s (room to attach and detach). A
	 * step that waited for the stub would take 250 or 700 ms; 100 ms
	 * leaves a busy machine room to deschedule the test. */
	r = run(&quick, 50, 3.5);
	snprintf(what, sizeof(what), "instant attach: a window a period (%d opened, %d closed, %llu late)",
		 r.opened, r.closed, (unsigned long long)r.late);
	check(what, !r.failed && r.opened >= 3 && r.closed >= 3 && r.late == 0);

	r = run(&slow, 50, 3.5);
	snprintf(what, sizeof(what), "250 ms attach: no step takes 100 ms (longest %.1f ms)",
		 r.longest_step_ns / 1e6);
	check(what, r.longest_step_ns < 100000000);
	snprintf(what, sizeof(what), "250 ms attach: windows open once attached, %.0f ms after "
		 "their planned start (>= 200)", r.first_open_after_ns / 1e6);
	check(what, !r.failed && r.opened >= 2 && r.closed >= 2 && r.first_open_after_ns >= 200000000);
	snprintf(what, sizeof(what), "250 ms attach: the stub attached each window once (%d for %llu)",
		 slow.calls, (unsigned long long)r.windows);
	check(what, (uint64_t)slow.calls == r.windows);

	/* Longer than the window: detached once attached, never opened. The
	 * last one may still be attaching when the run stops. */
	r = run(&slower, 50, 3.5);
	snprintf(what, sizeof(what), "700 ms attach: no step takes 100 ms (longest %.1f ms)",
		 r.longest_step_ns / 1e6);
	check(what, r.longest_step_ns < 100000000);
	snprintf(what, sizeof(what), "700 ms attach, 520 ms windows: none opened, late "
		 "(%d opened, %llu late of %llu)", r.opened, (unsigned long long)r.late,
		 (unsigned long long)r.windows);
	check(what, !r.failed && r.opened == 0 && r.windows >= 2 && r.late + 1 >= r.windows);

	r = run(&broken, 50, 2.5);
	check("an attach that fails on its thread: the step says so (-1)", r.failed);
	return unit_summary();
}
