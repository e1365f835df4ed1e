/* SPDX-License-Identifier: MIT */
/*
 * One tracing session: a target process, the BPF program loaded for it,
 * its probes and its trace (a file, a live profile, or both). Modes drive
 * it: modes/trace_one.c one process until it exits or a signal, agent/ every
 * Crystal process of a host, one session each.
 *
 * Order: session_new, session_from_command or session_from_pid, then
 * session_load (tables, BPF program), session_launch for a command,
 * session_start (probes, trace header), session_step whenever its fds
 * are readable or its timeout passes, session_finish, session_free.
 */
#ifndef ALYS_SESSION_H
#define ALYS_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct agent_opts;
struct gc_probes;
struct launch;
struct live_profile;
struct trace_writer;

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
	/* copies of mapped files this machine has not by their path
	 * (file_keep.h); NULL: OUTPUT.debug */
	const char *debug_dir;
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
	uint64_t memory_every_ns;	/* --memory-every (mem_sampler.h); 0: no samples */
	/* --http: serve the live profile here (http_endpoint.h); NULL: no */
	const struct sockaddr_storage *http_addr;
	const struct agent_opts *agent;	/* --all (agent/agent.h); NULL: one process */
};

struct session;
struct bpf_pool;

/* pool: unwind tables and BPF objects shared with other sessions (the
 * agent's, bpf_pool.h); NULL: its own. live: count a live profile
 * (live_profile.h) as the trace is written. */
struct session *session_new(const struct tracer_opts *o, struct bpf_pool *pool, bool live);
void session_free(struct session *s);

/* The target (target.h): 0, or the exit status for alys-bpf and a message
 * said on stderr. */
int session_from_command(struct session *s);
int session_from_pid(struct session *s, pid_t pid);
/* Unwind tables, sampling, liveness and the BPF program (loaded, not
 * attached). 0 or -1 (said). */
int session_load(struct session *s);
/* A command: forked and held before execve (launch.h) until released. */
int session_launch(struct session *s);
struct launch *session_launched(struct session *s);	/* NULL: attached */
/* Ring buffer, mapping watch, probes, trace header: 0 or -1 (said). */
int session_start(struct session *s);

/* Readable when there is work: the ring buffer's epoll fd, the process's
 * pidfd (it exited), the live profile's wake fd (-1 without). */
int session_rb_fd(const struct session *s);
int session_pidfd(const struct session *s);
int session_live_wake_fd(const struct session *s);
/* Milliseconds until session_step is next due (refill windows). -1: the
 * probes could not be attached again (said): stop the session. */
int session_timeout(struct session *s, uint64_t now);
/*
 * Drains what the probes and the kernel sent, flushes the trace when due
 * (or when a live profile reader or `flush` asks). Returns -1 when the
 * trace cannot be written (said): stop the session.
 */
int session_step(struct session *s, uint64_t now, bool flush);
/* Whether the process exited (its pidfd is readable); reaps a launched one. */
bool session_exited(struct session *s);
/* Detaches, drains, writes the trace's end and says what was traced. */
void session_finish(struct session *s);
/* The process's exit status, once session_exited (launched ones). */
int session_exit_status(const struct session *s);

pid_t session_pid(const struct session *s);
const char *session_exe(const struct session *s);
const struct gc_probes *session_gc(const struct session *s);
struct trace_writer *session_writer(struct session *s);
const char *session_output(const struct session *s);
/* The target's container (container_info.h; all empty when in none), as
 * of session_start. */
const struct container_info *session_container(const struct session *s);
struct live_profile *session_live_profile(struct session *s);
/* After session_finish: the live profile is the caller's to free. */
struct live_profile *session_take_live_profile(struct session *s);
uint64_t session_start_ns(const struct session *s);
/* Root with BTF, or a message naming the fix: 0 or -1 (said). */
int session_check_privileges(void);

#endif
