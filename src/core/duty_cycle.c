// SPDX-License-Identifier: MIT
#include "core/duty_cycle.h"

/* splitmix64: the window's place in each period, independent of the
 * program's own rhythm. */
static uint64_t next_random(struct duty_cycle *d)
{
	uint64_t z = (d->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void plan_period(struct duty_cycle *d, uint64_t start)
{
	uint64_t room = d->period_ns - d->on_ns - DUTY_ATTACH_NS - DUTY_DETACH_NS;

	d->period_start = start;
	d->attach_at = start + (room ? next_random(d) % room : 0);
	d->window_from = d->attach_at + DUTY_ATTACH_NS;
	d->window_until = d->window_from + d->on_ns;
}

void duty_cycle_init(struct duty_cycle *d, unsigned pct, uint64_t now)
{
	const uint64_t spare = DUTY_ATTACH_NS + DUTY_DETACH_NS;

	*d = (struct duty_cycle){ .pct = pct, .rng = now ^ 0x5851f42d4c957f2dull };
	if (pct > 99)
		pct = 99;
	/* on + spare <= period with on = pct% of the period. */
	d->period_ns = spare * 100 / (100 - pct) + 1;
	if (d->period_ns < DUTY_MIN_PERIOD_NS)
		d->period_ns = DUTY_MIN_PERIOD_NS;
	d->on_ns = d->period_ns * pct / 100;
	plan_period(d, now);
}

/* After a window (or one not taken): the next period on the fixed grid, so
 * that a late step does not shift the windows after it. */
static void plan_next(struct duty_cycle *d, uint64_t now)
{
	d->attached = false;
	while (d->period_start + d->period_ns <= now)
		d->period_start += d->period_ns;
	plan_period(d, d->period_start + d->period_ns);
}

static int ms_until(uint64_t now, uint64_t t)
{
	return t <= now ? 0 : (int)((t - now + 999999) / 1000000);
}

enum duty_action duty_cycle_step(struct duty_cycle *d, uint64_t now, int *timeout_ms)
{
	if (d->attached) {
		if (now >= d->window_until) {
			plan_next(d, now);
			*timeout_ms = ms_until(now, d->attach_at);
			return DUTY_DETACH;
		}
		*timeout_ms = ms_until(now, d->window_until);
		return DUTY_NONE;
	}
	if (now >= d->window_from) {
		/* Woken too late for this window: skip it, and say so. */
		d->late++;
		plan_period(d, d->period_start + d->period_ns);
		*timeout_ms = ms_until(now, d->attach_at);
		return DUTY_NONE;
	}
	if (now >= d->attach_at) {
		d->attached = true;
		d->windows++;
		*timeout_ms = ms_until(now, d->window_until);
		return DUTY_ATTACH;
	}
	*timeout_ms = ms_until(now, d->attach_at);
	return DUTY_NONE;
}

void duty_cycle_skip(struct duty_cycle *d, uint64_t now)
{
	d->windows--;
	plan_next(d, now);
}
