/* SPDX-License-Identifier: MIT */
/*
 * Destroys uprobe links in parallel, in the background. Unregistering a
 * uprobe removes its breakpoints at once but then waits for RCU grace
 * periods (170-360 ms measured on Linux 6.18); destroyed one after the
 * other, the links not yet destroyed keep trapping for that long, and the
 * daemon's loop stalls. One thread per link: all breakpoints go at once.
 */
#ifndef ALYS_LINK_REAPER_H
#define ALYS_LINK_REAPER_H

#include <pthread.h>
#include <stdbool.h>

struct bpf_link;

/* a session's links and uprobe-session links, all at once */
#define LINK_REAPER_MAX 32

/* A probe's link: libbpf's, or a link fd made with bpf(2) (a uprobe_multi
 * link: libbpf 1.1 has none). None: { NULL, -1 }. */
struct probe_link {
	struct bpf_link *link;
	int fd;
};

struct link_reaper {
	pthread_t threads[LINK_REAPER_MAX];
	struct probe_link going[LINK_REAPER_MAX];
	int n;
};

/* Takes the links (n at most LINK_REAPER_MAX); they are gone once
 * link_reaper_wait returns or link_reaper_busy says false. */
void link_reaper_start(struct link_reaper *r, struct probe_link *links, int n);
bool link_reaper_busy(struct link_reaper *r);
void link_reaper_wait(struct link_reaper *r);

#endif
