/* SPDX-License-Identifier: MIT */
/* One tracing session: load the BPF program, attach, record, detach. */
#ifndef ALYS_TRACER_H
#define ALYS_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

enum sample_mode {
	SAMPLE_DEFAULT,		/* refill with --pid, all for a launched command */
	SAMPLE_ALL,
	SAMPLE_BYTES,		/* bytes:N */
	SAMPLE_REFILL,		/* the collector's slow paths only */
};

/* What --sample refill falls back to where the slow paths cannot be probed. */
#define SAMPLE_FALLBACK_BYTES (512u << 10)
/* --duty for refill sampling under --pid, measured on bench/http_server.sh:
 * the server keeps >= 80% of its throughput on this project's VMs. */
#define DUTY_DEFAULT_PID 20

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
	int sample;		/* enum sample_mode */
	uint64_t sample_bytes;	/* SAMPLE_BYTES: mean bytes between samples */
	unsigned duty_pct;	/* --duty: refill probes attached this share of the time; 0: default */
	uint32_t ringbuf_size;	/* bytes, a power of two; 0: the BPF object's */
	bool no_liveness;	/* do not follow blocks to their collection */
	uint32_t census_every;	/* --census N: walk the heap every N collections; 0: off */
	uint64_t interval_ns;	/* --interval: print live bytes by site this often */
	bool heap_snapshot;	/* --heap-snapshot: copy the heap once (heap_snapshot.h) */
	/* --http: serve the live profile here (http_endpoint.h); NULL: no */
	const struct sockaddr_storage *http_addr;
};

/* Returns the process exit status to use for alys-bpf itself. */
int tracer_run(const struct tracer_opts *o);

#endif
