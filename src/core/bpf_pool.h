/* SPDX-License-Identifier: MIT */
/*
 * What sessions share: the unwind tables and the loaded BPF objects
 * (bpf/alys.bpf.c). One object serves every session configured alike (the
 * same read-only data and programs: the same libgc build and options) in
 * up to ALYS_MAX_SESSIONS slots, so that the agent's kernel verifies the
 * programs once, not once a process (~0.6 s of a CPU each). A slot has its
 * own ring buffer, stack cache, tracked-block maps, counters and state
 * (struct alys_sess); its probes carry it in their attach cookies.
 *
 * Thread-safe: the agent loads sessions on a thread of its own while the
 * main one ends others.
 */
#ifndef ALYS_BPF_POOL_H
#define ALYS_BPF_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alys_events.h"

struct alys_bpf;
struct bpf_helpers;
struct bpf_pool;
struct bpf_group;
struct unwind_maps;

struct bpf_pool *bpf_pool_new(void);
/* Destroys every object: after every slot was given back. */
void bpf_pool_free(struct bpf_pool *p);
struct unwind_maps *bpf_pool_unwind_maps(struct bpf_pool *p);

/* A loaded object configured as `configured` (an opened skeleton, its
 * read-only data and programs chosen) with a free slot; NULL: none. */
struct bpf_group *bpf_pool_find(struct bpf_pool *p, const struct alys_bpf *configured);
/* skel, loaded (by bpf_load: with helpers, or NULL), joins the pool
 * (which destroys them); NULL: out of memory (both destroyed).
 * uprobe_sessions: loaded with the uprobe-session programs. */
struct bpf_group *bpf_pool_add(struct bpf_pool *p, struct alys_bpf *skel,
			       struct bpf_helpers *helpers, bool uprobe_sessions);

/* A session's slot in a loaded object. */
struct bpf_slot {
	struct bpf_group *g;
	struct alys_bpf *skel;		/* the group's: its programs */
	struct alys_sess *st;		/* the slot's state, mapped */
	uint32_t slot;
	bool uprobe_sessions;
	int events_fd;			/* the slot's ring buffer */
	pid_t exit_pid;			/* bpf_slot_watch_exit's, 0: none */
};

/* The sizes of a slot's maps. */
struct bpf_slot_sizes {
	uint32_t ringbuf_bytes;		/* a power of two, >= 4096 */
	uint32_t stack_cache;		/* entries: the object's mask + 1 */
	uint32_t tracked_small, tracked_mid, tracked_big;
};

/* A free slot of g with new maps and zeroed state and counters: 0, or -1
 * with a message naming the cause in err. */
int bpf_slot_take(struct bpf_pool *p, struct bpf_group *g, const struct bpf_slot_sizes *sz,
		  struct bpf_slot *s, char *err, size_t errlen);
/* The exit_group tracepoint reads pid's slot's last collection when it
 * exits (attached once an object). 0, or -errno. */
int bpf_slot_watch_exit(struct bpf_slot *s, pid_t pid);
/* Counters of the slot (ALYS_CNT_NR, summed over CPUs). */
void bpf_slot_counters(const struct bpf_slot *s, uint64_t out[ALYS_CNT_NR]);
/* The slot's maps dropped and the slot free again: after its probes are
 * detached and its ring buffer drained. */
void bpf_slot_give_back(struct bpf_pool *p, struct bpf_slot *s);
/* The same where the pool is freed next (one process traced): the slot's
 * maps go with the object's. Taken out one by one, each would wait for an
 * RCU grace period (~10 ms; five maps a slot). */
void bpf_slot_give_back_last(struct bpf_pool *p, struct bpf_slot *s);

#endif
