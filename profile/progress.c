// SPDX-License-Identifier: MIT
#include "profile/progress.h"

#include <stdio.h>
#include <time.h>

#include "lib/util.h"

#define BAR_WIDTH 40
#define SHOW_AFTER_NS 1000000000ull

static bool enabled;
static uint64_t run_start_ns;

static uint64_t now_ns(void);

/* The second counts from here: a conversion whose phases each take half a
 * second still gets a bar once it has run for a second. */
void progress_enable(bool on)
{
	enabled = on;
	run_start_ns = on ? now_ns() : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void progress_begin(struct progress *p, const char *label, uint64_t total)
{
	p->label = label;
	p->total = total;
	p->shown = false;
	p->start_ns = run_start_ns;
	/* ~200 clock reads per phase at most; none at all when disabled */
	p->next_check = enabled ? total / 200 + 1 : UINT64_MAX;
}

void progress_update(struct progress *p, uint64_t done)
{
	char bar[BAR_WIDTH + 1];
	unsigned int pct, fill;

	p->next_check = done + p->total / 200 + 1;
	if (!p->shown && now_ns() - p->start_ns < SHOW_AFTER_NS)
		return;
	p->shown = true;
	if (done > p->total)
		done = p->total;
	pct = p->total ? (unsigned int)(done * 100 / p->total) : 100;
	fill = pct * BAR_WIDTH / 100;
	for (unsigned int i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\r%s: %-10s [%s] %3u%%", prog_name, p->label, bar, pct);
	fflush(stderr);
}

void progress_end(struct progress *p)
{
	if (p->shown) {
		progress_update(p, p->total);
		fputc('\n', stderr);
	}
	p->shown = false;
	p->next_check = UINT64_MAX;
}
