/* SPDX-License-Identifier: MIT */
/*
 * A progress bar on stderr for conversions that take more than a second.
 * Shown only when stderr is a terminal (never in logs or pipes), and only
 * once the conversion has run for a second, so quick ones print nothing.
 * Callers tick it from their loops; ticks are a compare until the next
 * checkpoint, so the hot loops stay hot.
 */
#ifndef ALYS_CONV_PROGRESS_H
#define ALYS_CONV_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	const char *label;
	uint64_t total;
	uint64_t next_check;	/* tick value at which to look at the clock again */
	uint64_t start_ns;
	bool shown;
};

/* Call once: enable bars (main decides: stderr is a tty, not quiet). */
void progress_enable(bool on);

void progress_begin(struct progress *p, const char *label, uint64_t total);
void progress_update(struct progress *p, uint64_t done);
void progress_end(struct progress *p);

static inline void progress_tick(struct progress *p, uint64_t done)
{
	if (done >= p->next_check)
		progress_update(p, done);
}

#endif /* ALYS_CONV_PROGRESS_H */
