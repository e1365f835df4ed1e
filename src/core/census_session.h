/* SPDX-License-Identifier: MIT */
/*
 * --census, the daemon's side: the BPF program stops the target (SIGSTOP) at
 * GC_set_start_callback and then at the start of each collection; here the
 * first stop puts a probe on the callback, the others walk the heap
 * (census.c) and write the census to the trace; both resume the target.
 * With --pid the callback is read from the collector's state instead.
 */
#ifndef ALYS_CENSUS_SESSION_H
#define ALYS_CENSUS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alys_events.h"

struct bpf_link;
struct bpf_program;
struct gc_probes;
struct trace_writer;

struct census_session {
	pid_t pid;
	const struct gc_probes *gp;
	struct trace_writer *w;
	bool verbose;
	/* The BPF side: the trigger program, its attach cookie (the
	 * session's slot) and the session's words it reads. */
	struct bpf_program *trigger_prog;
	uint64_t trigger_cookie;
	__u64 *trigger_gc_no_addr;
	__u32 *trigger_every;
	uint32_t every;			/* --census=N */
	/* Whether the trace holds a block's allocation (NULL: no allocation
	 * is recorded, --census alone). */
	int (*recorded)(void *arg, uint64_t addr);
	void *recorded_arg;

	uint64_t bias;			/* load bias of libgc's object, from the first stop */
	uint64_t censuses;
	struct bpf_link *trigger;
};

/* 0 if --census can run on this target, else -1 with the cause and fix. */
int census_session_check(const struct gc_probes *gp, bool launched, char *err, size_t errlen);
/* --pid: the program registered its start callback long ago; find it in
 * the collector's state and probe it. 0, or -1 with the cause. */
int census_session_attach_running(struct census_session *cs, char *err, size_t errlen);
/* One stop: the target stopped itself; exited says it may be gone. */
void census_session_on_stop(struct census_session *cs, const struct alys_rb_census *c,
			    bool exited);
void census_session_detach(struct census_session *cs);

#endif
