/* SPDX-License-Identifier: MIT */
/*
 * A session's insides, shared by the files it is split into (session.h is
 * its interface to the rest): session.c its life, bpf_setup.c the BPF
 * object configured and loaded for it, probe_attach.c its probes. Private
 * to these three.
 */
#ifndef ALYS_SESSION_PRIV_H
#define ALYS_SESSION_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "alys_events.h"
#include "core/bpf_pool.h"
#include "core/census_session.h"
#include "core/container_info.h"
#include "core/launch.h"
#include "core/mem_sampler.h"
#include "gc/liveness_setup.h"
#include "lib/util.h"
#include "core/mmap_watch.h"
#include "core/proc_maps.h"
#include "core/record_sink.h"
#include "core/refill_windows.h"
#include "core/session.h"
#include "core/target.h"

struct alys_bpf;
struct bpf_link;
struct bpf_program;
struct ring_buffer;
struct unwind_maps;

/* Counted by the daemon, after the BPF program's. */
enum {
	CNT_UNMAPPED_IP = ALYS_CNT_NR,	/* a frame in no known mapping */
	CNT_STACK_RESENT,	/* a stack sent again (evicted from the kernel's cache) */
	CNT_STACK_COLLISION,	/* two stack nodes with one 64-bit key: the later merged */
	CNT_STACK_ORPHAN,	/* a stack record below a node never sent: stack lost */
	CNT_STACK_UNKNOWN,	/* an event's stack key names no node: stack lost */
	CNT_STACK_NODES,	/* stack nodes written */
	CNT_DUTY_WINDOWS,	/* --duty: windows the refill probes were attached */
	CNT_DUTY_LATE,		/* --duty: windows missed or begun unattached */
	CNT_GC_BYTES,		/* --duty: the collector's count of bytes allocated */
	CNT_GC_BYTES_SAMPLED,	/* --duty: its growth inside the windows */
	CNT_GC_BYTES_SAMPLED_REALLOC,	/* --duty: inside those that probed GC_realloc */
	CNT_MEMORY_SAMPLES,	/* memory records written (mem_sampler.h) */
	CNT_MEMORY_SAMPLE_NS,	/* the tracer's time spent taking them */
	NR_COUNTERS
};

struct session {
	const struct tracer_opts *o;
	struct target tg;
	struct alys_bpf *skel;		/* bs.skel: the programs, maybe shared */
	struct bpf_slot bs;		/* this session's slot in it */
	struct bpf_pool *pool;		/* own_pool, or the agent's */
	struct bpf_pool *own_pool;
	struct ring_buffer *rb;
	struct bpf_link *links[16];
	int nlinks;
	int session_fds[24];	/* uprobe-session and uprobe_multi links */
	int nsessions;
	bool uprobe_sessions;	/* attached as uprobe sessions (Linux 6.13+): see bpf/alys.bpf.c */
	bool predict_blocks;	/* a call's block read at its entry (bpf/predict.h) */
	bool pauses;		/* the pause probes (both found, not --empty-probes) */
	bool grows;		/* the heap growth probe (found, not --empty-probes) */
	bool multi;		/* uprobes as uprobe_multi links where kept (session_link.h) */
	bool refill_multi;	/* so are the refill probes */
	struct unwind_maps *um;		/* the pool's */
	struct record_sink sink;	/* the trace writer, stacks, blocks held */
	struct proc_maps maps;
	struct mmap_watch mw;
	bool want_live;
	struct live_profile *lp;	/* --interval, --http, --push: the profile so far */
	uint64_t start_ns;
	struct launch launch;
	struct invoker inv;
	int pidfd;
	bool launched;
	bool exited;
	bool maps_gone;
	int exit_status;
	uint64_t last_flush, last_counters;
	struct liveness_setup live;
	uint64_t counters[NR_COUNTERS];
	char output[PATH_MAX];
	struct container_info ci;	/* of the target, read at start */
	bool census_only;		/* --census without --sample: no allocation probes */
	uint64_t sample_bytes;		/* bytes:N in effect (0: none) */
	bool refill;			/* --sample refill in effect */
	bool refill_fell_back;		/* asked for, but the slow paths were not found */
	unsigned duty_pct;		/* refill probes attached this share of the time */
	struct refill_windows rw;	/* the refill probes, in --duty windows */
	bool refill_announced;		/* -v named their probe points */
	struct census_session census;
	struct mem_sampler mem;		/* --memory-every */
};

#define say(t, ...) say_unless((t)->o->quiet, __VA_ARGS__)

/* Every probe's attach cookie carries the session's slot in its top byte:
 * the programs may serve other sessions too (bpf_pool.h). */
static inline __u64 slot_cookie(const struct session *t)
{
	return (__u64)t->bs.slot << ALYS_COOKIE_SLOT_SHIFT;
}

/* bpf_setup.c */

/* Refill sampling where the slow paths can be probed; bytes:512K where not,
 * said once: a user who asked for a cheap probe gets a dearer one. */
void bpf_setup_choose_sampling(struct session *t);
/* The programs: those of a loaded object configured alike if the pool has
 * one with room (the agent's other processes), else loaded now; and a slot
 * in it with this session's maps. 0 or -1 (said). */
int bpf_setup_open(struct session *t);

/* probe_attach.c */

/* --sample refill's probes: the refill point, GC_malloc_kind_global's entry
 * and return (medium and large objects: the block's address is its
 * return), and last GC_realloc's entry (not in every window). */
#define REFILL_PROBES 4

struct refill_attach {
	struct bpf_program *prog;
	const struct gc_func *f;
	bool ret;
};

/* t's, with their programs: bpf_setup.c sets how they attach, the windows
 * attach them. */
void probe_attach_refill_probes(struct session *t, struct refill_attach p[REFILL_PROBES]);
/* A uprobe (or uretprobe) at f's probe point. */
struct bpf_link *probe_attach_link(struct session *t, struct bpf_program *prog,
				   const struct gc_func *f, bool ret, __u64 cookie, bool announce);
/* probe_attach_link as a uprobe_multi link: its fd, or -1. */
int probe_attach_multi(struct session *t, struct bpf_program *prog, const struct gc_func *f,
		       bool ret, __u64 cookie, bool announce);
/* The probes session_start attaches: those kept until session_finish, the
 * refill windows' first (refill_windows.h), the exit tracepoint. 0 or -1
 * (said). */
int probe_attach_all(struct session *t);

#endif
