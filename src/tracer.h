/* SPDX-License-Identifier: MIT */
/* One tracing session: load the BPF program, attach, record, detach. */
#ifndef ALYS_TRACER_H
#define ALYS_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer_opts {
	char **argv;		/* command to launch, or NULL with pid */
	pid_t pid;
	const char *output;
	int unwind;		/* enum alys_unwind_mode */
	unsigned max_frames;
	uint32_t stack_cache;	/* stacks whose keys the kernel remembers as sent */
	bool as_root;
	bool quiet;
	bool verbose;
	bool empty_probes;	/* benchmark floor: probes that record nothing */
	uint64_t sample_bytes;	/* 0: every call; else mean bytes between samples */
	uint32_t ringbuf_size;	/* bytes, a power of two; 0: the BPF object's */
	bool no_liveness;	/* do not follow blocks to their collection */
	uint32_t census_every;	/* --census N: walk the heap every N collections; 0: off */
	uint64_t interval_ns;	/* --interval: print live bytes by site this often */
};

/* Returns the process exit status to use for alys-bpf itself. */
int tracer_run(const struct tracer_opts *o);

#endif
