/* SPDX-License-Identifier: MIT */
/*
 * --duty PCT: the refill probes attached during one window of fixed length
 * per period, placed at random in each period, so that any instant is
 * covered with probability PCT/100 whatever the program does. A probe not
 * attached costs nothing, which bounds the tracing cost of a busy server;
 * events are weighted by 100/PCT, so totals stay unbiased. The BPF side
 * records only inside the window, so its length is exact even though
 * attaching and detaching take a variable time around it. Detaching waits
 * for the kernel's uprobe unregistration (RCU grace periods: 170-360 ms
 * measured on Linux 6.18), so each period leaves room for it, and a period
 * is at least a second long.
 */
#ifndef ALYS_DUTY_CYCLE_H
#define ALYS_DUTY_CYCLE_H

#include <stdbool.h>
#include <stdint.h>

#define DUTY_MIN_PERIOD_NS 1000000000ull
#define DUTY_ATTACH_NS 20000000ull	/* allowed for attaching before a window */
#define DUTY_DETACH_NS 500000000ull	/* and for detaching after it */

/* --sample refill probes GC_realloc (in-place reallocs) in one window of
 * this many: it traps ~4x as often as the refills. */
#define DUTY_REALLOC_EVERY 8

enum duty_action { DUTY_NONE, DUTY_ATTACH, DUTY_DETACH };

struct duty_cycle {
	unsigned pct;
	uint64_t period_ns;
	uint64_t on_ns;			/* window length: pct% of the period */
	uint64_t period_start;		/* of the current period */
	uint64_t attach_at;		/* this period's, 0 once done */
	uint64_t window_from, window_until;
	bool attached;
	uint64_t windows;
	uint64_t late;			/* windows missed or begun unattached */
	uint64_t rng;
};

void duty_cycle_init(struct duty_cycle *d, unsigned pct, uint64_t now);
/* What to do at time now, and the milliseconds until the next step. */
enum duty_action duty_cycle_step(struct duty_cycle *d, uint64_t now, int *timeout_ms);
/* The window just given could not be attached: on to the next period. */
void duty_cycle_skip(struct duty_cycle *d, uint64_t now);

#endif
