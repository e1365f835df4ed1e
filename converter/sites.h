/* SPDX-License-Identifier: MIT */
/*
 * Allocation sites and their live bytes over time, from allocation events
 * and the frees (called or inferred, FORMAT.md record 6) that end them.
 *
 * A site is named by the name of its frame as stack_site() (profile.h)
 * picks it, the one rule of every output: the first frame that is neither
 * the allocator's nor a constructor of the type being built. Names only, no
 * addresses or lines, so that two builds of a program (diff) name the same
 * site the same way; with DWARF the site's file:line follows ("name
 * file.cr:12"), as the report shows it, so every table agrees.
 */
#ifndef ALYS_CONV_SITES_H
#define ALYS_CONV_SITES_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize.h"
#include "trace.h"

struct site {
	char *name;
	uint64_t allocs, alloc_bytes;	/* allocation events and their weights */
	uint64_t frees;			/* of its blocks, called or inferred */
	int64_t live_bytes, live_objs;	/* at the end of the trace */
	/* Live bytes at each snapshot (the end of each collection read, or
	 * each new gc_no without liveness records) since the site's first: */
	uint32_t snapshots, rises, falls;
	int64_t first_live, last_live, peak_live;
	/* Age, in collections, of the blocks live at the end. */
	uint64_t age_sum;
	uint32_t age_max;
};

/* Allocated and live bytes by allocating thread (like alloc-track's
 * thread report). */
struct thread_stat {
	uint32_t tid;
	uint64_t allocs, alloc_bytes;
	int64_t live_bytes, live_objs;
};

struct site_table {
	struct site *sites;		/* sorted by name (strcmp) */
	size_t n;
	uint32_t snapshots;		/* taken over the whole trace */
	uint32_t last_gc;		/* the last collection known */
	struct thread_stat *threads;	/* by tid */
	size_t nthreads;
	/* Called after each snapshot with its time (trace clock), if set. */
	void (*on_snapshot)(const struct site_table *st, uint64_t ts_ns, void *arg);
	void *arg;
};

/* Builds the table; every allocation event counts at its site. */
void sites_build(const struct trace *t, struct symbolizer *sym, struct site_table *st);
/* The same, calling on_snapshot(arg) at every snapshot and once at the end. */
void sites_build_cb(const struct trace *t, struct symbolizer *sym, struct site_table *st,
		    void (*on_snapshot)(const struct site_table *, uint64_t, void *), void *arg);
void sites_free(struct site_table *st);

/* The site name of a stack (malloc'd). */
char *sites_name_stack(const struct trace *t, struct symbolizer *sym,
		       const struct trace_stack *st);

/* The site of name, or NULL. */
const struct site *sites_find(const struct site_table *st, const char *name);

#endif /* ALYS_CONV_SITES_H */
