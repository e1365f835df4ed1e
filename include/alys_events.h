/* SPDX-License-Identifier: MIT */
/*
 * Records passed from the BPF program to the alys-bpf daemon through the
 * ring buffer. Shared by bpf/alys.bpf.c and src/; fixed-width types only.
 */
#ifndef ALYS_EVENTS_H
#define ALYS_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "alys_format.h"	/* event kinds and free causes: values the trace keeps */

/* Compile-time cap on frames per stack; --max-frames may lower it. */
#define ALYS_MAX_FRAMES 128	/* a power of two: indexes are masked for the verifier */
#define ALYS_DEFAULT_FRAMES 127	/* perf's and bcc's default: deep recursion is common */
/* Keys of stack nodes (prefixes) already sent, kept by the kernel
 * (--stack-cache): a node evicted from it is sent again, never lost. 8
 * bytes of kernel memory each. */
#define ALYS_DEFAULT_STACK_CACHE (1 << 20)
/* Entries of nested GC calls tracked per thread (finalizers may allocate). */
#define ALYS_MAX_DEPTH 8

enum alys_rb_type {
	ALYS_RB_EVENT = 1,
	ALYS_RB_STACK = 2,
	ALYS_RB_DEATH = 3,	/* a tracked block found dead */
	ALYS_RB_COLLECTION = 4,	/* a collection's marks were read */
	ALYS_RB_CENSUS = 5,	/* --census: the target is stopped for a heap walk */
	ALYS_RB_PAUSE = 6,	/* the collector stopped the world and restarted it */
	ALYS_RB_GROW = 7,	/* the collector added memory to its heap */
};

enum alys_live_mode {
	ALYS_LIVE_OFF = 0,	/* --no-liveness */
	ALYS_LIVE_MARKS = 1,	/* mark bytes, layout derived from the binary */
	ALYS_LIVE_REUSE = 2,	/* fallback: address reuse only */
};

/* alys_sess.live_state, the mark-byte layout's run-time check. */
enum alys_live_state {
	ALYS_LIVE_VERIFYING = 0,
	ALYS_LIVE_VERIFIED = 1,
	ALYS_LIVE_FAILED = 2,	/* fell back to address reuse */
};

/* Allocations whose block headers must check out before marks are used,
 * and how many must not before the layout is given up: one read racing
 * the collector or another thread is no proof of a wrong layout (a wrong
 * one fails every check). */
#define ALYS_LIVE_VERIFY_N 8
#define ALYS_LIVE_FAIL_N 3

enum alys_unwind_mode {
	ALYS_UNWIND_FP = 0,
	ALYS_UNWIND_DWARF = 1,
};

/* Per-CPU counters of anything lost or degraded, ALYS_CNT_NR a session
 * (at slot * ALYS_CNT_NR), summed by the daemon. */
enum alys_counter {
	ALYS_CNT_RB_DROP_EVENT,	/* ring buffer full: event lost */
	ALYS_CNT_RB_DROP_STACK,	/* ring buffer full: new stack lost */
	ALYS_CNT_STACK_SENT,	/* stack records sent: not in the kernel's cache */
	ALYS_CNT_DEPTH_OVERFLOW,	/* nesting deeper than ALYS_MAX_DEPTH */
	ALYS_CNT_STACK_TRUNCATED,	/* walk stopped at max frames, more were there */
	ALYS_CNT_UNWIND_NO_TABLE,	/* dwarf: pc in no known table */
	ALYS_CNT_UNWIND_BAD_READ,	/* user memory unreadable mid-walk */
	ALYS_CNT_TRACKED_FULL,	/* tracked-block map full: block not tracked */
	ALYS_CNT_LIVE_UNREADABLE,	/* a header could not be read: judged later */
	ALYS_CNT_LIVE_REUSED,	/* marks mode, yet a death found by reuse (the daemon's) */
	ALYS_CNT_LIVE_MERGED,	/* collections that ended without a scan of their own */
	ALYS_CNT_RB_DROP_DEATH,	/* ring buffer full: death reported later */
	ALYS_CNT_REFILL,	/* --sample refill: free-list refills recorded */
	ALYS_CNT_REFILL_CUT,	/* a refill's list longer than counted: weight low */
	ALYS_CNT_REALLOC_IN_PLACE,	/* --sample refill: GC_realloc kept its block */
	ALYS_CNT_DUTY_OUTSIDE,	/* --duty: probe hits outside a window (attaching, detaching) */
	ALYS_CNT_STACK_FRAMES_SENT,	/* frames the stack records carried */
	ALYS_CNT_LIVE_EXIT_IN_GC,	/* the program exited inside a GC call: no end scan */
	ALYS_CNT_NO_THREAD_STATE,	/* a thread's state could not be allocated: call lost */
	ALYS_CNT_FRAMES_REUSED,	/* dwarf: frames taken from the thread's previous walk */
	ALYS_CNT_REFILL_BAD_SIZE,	/* --sample refill: a refill's size implausible: dropped */
	ALYS_CNT_RETURN_MISSED,	/* calls whose return probe never fired: dropped */
	ALYS_CNT_FRAMES_WALKED,	/* dwarf: frames found by walking (not reused) */
	ALYS_CNT_STACK_PAGES_READ,	/* dwarf: stack pages a walk copied whole */
	ALYS_CNT_UNWIND_SEARCHES,	/* dwarf: rows not memoized: the tables searched */
	ALYS_CNT_STACK_WORDS_READ,	/* dwarf: stack words read one by one, not by page */
	ALYS_CNT_RB_DROP_PAUSE,	/* a GC pause's record lost (ring buffer full) */
	ALYS_CNT_RB_DROP_GROW,	/* a heap growth's record lost (ring buffer full) */
	ALYS_CNT_STACK_SPANS_READ,	/* dwarf: walks that copied the last one's span at once */
	ALYS_CNT_WALKS_IN_PLACE,	/* dwarf: walks that met the last one and checked its frames */
	ALYS_CNT_GC_NO_READS,	/* GC_gc_no read from the target for an event (gc_no_at) */
	ALYS_CNT_PREDICTED,	/* calls finished at entry: their block read there */
	ALYS_CNT_PREDICT_CHECKED,	/* blocks read at entry checked at the return */
	ALYS_CNT_PREDICT_WRONG,	/* ...and found wrong: no more read in the session */
	ALYS_CNT_STACK_SPAN_BYTES,	/* dwarf: bytes those span reads copied or mapped */
	ALYS_CNT_STACK_SPANS_MAPPED,	/* dwarf: span reads through the direct map, not copied */
	ALYS_CNT_NR,
};

/*
 * Sessions that share one loaded BPF object (the agent's, one a traced
 * process): each has a slot, the top byte of its probes' attach cookies
 * (ALYS_COOKIE_SLOT_SHIFT), which finds its state below, its ring buffer,
 * stack cache, tracked-block maps and counters. A power of two.
 */
#define ALYS_MAX_SESSIONS 64
/* Entries (4 KiB collector blocks) of a session's small and mid
 * tracked-block maps (bpf/live.h): 16 and 128 MiB of heap. */
#define ALYS_TRACKED_SMALL (1 << 12)
#define ALYS_TRACKED_MID (1 << 15)
/* Their bits: one a 16-byte granule of a 4 KiB collector block, x86-64's
 * sizes; liveness by marks needs the collector's to be these. */
#define ALYS_TRACK_HBLK_SHIFT 12
#define ALYS_TRACK_GRANULE_SHIFT 4
/* A block header's hb_flags this far before its hb_marks, at most. */
#define ALYS_FLAGS_GAP_MAX 64
#define ALYS_COOKIE_SLOT_SHIFT 56
/* gc_world_stop's cookie bit: attached at the collection's entry
 * (GC_try_to_collect_inner), not at GC_stop_world. */
#define ALYS_COOKIE_COLLECT 1

/* A session's state in the BPF object's `sessions` map, read and written
 * by the daemon through its mapping (src/core/bpf_pool.h). */
/* Where GC_thread_key lives (src/gc/gc_vars.h, bpf/predict.h). */
enum alys_tls_mode {
	ALYS_TLS_NONE,
	ALYS_TLS_STATIC,	/* at a fixed offset from the fs base */
	ALYS_TLS_DTV,		/* in a module's block, through the DTV */
};

struct alys_sess {
	__u32 slot;			/* its own index, set by the daemon */
	__u32 live_state;		/* enum alys_live_state */
	__u32 live_verified;		/* allocations whose header checked out */
	__u32 live_end_request;		/* the daemon, detaching: scan once more */
	__u64 live_scanned_gc;		/* last collection whose marks were read */
	__u64 live_scans;
	__u64 live_next_scan_ns;	/* no implicit scan before this time */
	__u64 live_explicit_gc;		/* the collection GC_gcollect runs */
	__u64 live_bias;		/* libgc's load bias, for the exit scan */
	__s64 tracked_n[3];		/* entries in each tracked map (bpf/live.h) */
	__u64 duty_from_ns, duty_until_ns;	/* --duty's window; 0: always */
	__u64 last_wakeup_ns;		/* the ring buffer's last forced wakeup */
	__u64 census_gc_no_addr;	/* --census: GC_gc_no, once the bias is known */
	__u32 census_every;		/* 0 or 1: every collection */
	__u32 census_last_gc;		/* the collection last walked */
	__u32 live_mismatched;		/* allocations whose header did not check out */
	/* GC_gc_no read once a collection (bpf/live.h, gc_no_at): the world
	 * stops and starts counted, the value read last and the count it was
	 * read at, and whether the pause probes are seen to bracket
	 * collections (0 not yet, 1 yes, 2 no more: the daemon detaches
	 * them) */
	__u32 gc_world_gen;
	__u32 gc_world_stopped;
	__u32 gc_no_known;
	__u32 pad_gc;
	__u64 gc_no_cache;		/* gen << 32 | GC_gc_no */
	__u32 predict_off;		/* a block read at entry was wrong: read no more */
	__u32 pad_predict;
};

struct alys_rb_event {
	__u8 type;		/* ALYS_RB_EVENT */
	__u8 kind;		/* enum alys_kind */
	__u8 depth;		/* >0: nested inside another GC call */
	__u8 pad;
	__u32 tid;
	__u64 ts_ns;		/* CLOCK_MONOTONIC */
	__u64 size;		/* requested bytes; 0 for free */
	__u64 addr;		/* returned (or freed) address */
	__u64 old_addr;		/* realloc only */
	__u64 objects;		/* objects it stands for, when the kernel counted
				 * them (a refill's list); 0: one call */
	__u64 gc_no;		/* collector's GC_gc_no at return, 0 if unknown */
	__u64 stack_key;	/* key of a stack record; 0: no stack */
};

struct alys_rb_death {
	__u8 type;		/* ALYS_RB_DEATH */
	__u8 cause;		/* enum alys_free_cause: MARKS or REUSE */
	__u16 pad;
	__u32 gc_no;		/* found dead after this collection */
	__u32 since;		/* ... and alive before this one */
	__u32 pad2;
	__u64 addr;
	__u64 ts_ns;
};

struct alys_rb_collection {
	__u8 type;		/* ALYS_RB_COLLECTION */
	__u8 at_end;		/* read at the target's exit or the detach */
	__u8 pad[2];
	__u32 gc_no;		/* the collection whose marks were read */
	__u32 since;		/* first collection this scan covers */
	__u32 pad2;
	__u64 ts_ns;
	__u64 scan_ns;		/* time the scan took in the target */
	__u64 followed;		/* tracked blocks, judged or not */
	__u64 judged;		/* tracked blocks allocated before the collection */
	__u64 dead;
	__u64 unreadable;
};

/*
 * --census. what 0: GC_set_start_callback was called with arg (the
 * program's start-of-collection callback, where the census probe goes);
 * 1: that callback runs, the previous collection's marks are intact.
 * Either way the BPF program has sent the target SIGSTOP: the daemon
 * resumes it with SIGCONT.
 */
struct alys_rb_census {
	__u8 type;		/* ALYS_RB_CENSUS */
	__u8 what;
	__u16 pad;
	__u32 gc_no;		/* GC_gc_no: the collection whose marks stand */
	__u64 ts_ns;
	__u64 arg;
	__u64 bias;		/* load bias of the object holding libgc */
};

/*
 * A stop-the-world pause: the thread that collected stopped the other
 * threads (GC_stop_world) at stop_ns and had them running again
 * (GC_start_world returned) at start_ns. Its stack, walked as the world
 * stopped, leads to what triggered the collection: an allocation's slow
 * path, or GC_gcollect.
 */
struct alys_rb_pause {
	__u8 type;		/* ALYS_RB_PAUSE */
	__u8 pad[3];
	__u32 tid;
	__u32 gc_no;		/* GC_gc_no once restarted: the collection's number */
	__u32 pad2;
	__u64 stop_ns, start_ns;
	__u64 stack_key;	/* 0: no stack */
	/* the collection around it (GC_try_to_collect_inner's entry and
	 * return, where libgc names it); 0: not measured */
	__u64 begin_ns, end_ns;
};

/*
 * The collector's heap grew by bytes (GC_expand_hp_inner adding a section
 * it got from the system), on the thread tid; its stack leads to what
 * needed the memory: an allocation's slow path, or GC_init.
 */
struct alys_rb_grow {
	__u8 type;		/* ALYS_RB_GROW */
	__u8 pad[3];
	__u32 tid;
	__u32 gc_no;		/* GC_gc_no: collections done before it */
	__u32 pad2;
	__u64 ts_ns, bytes;
	__u64 stack_key;	/* 0: no stack */
};

/*
 * The part of a stack the kernel's cache of sent nodes does not know: stacks
 * are a tree of prefixes rooted at the outermost frame (alys_stack_key.h),
 * and a record carries only the frames below the deepest prefix already
 * sent (parent), innermost first, so a new stack costs its new frames. A
 * node evicted from the cache is sent again, never lost: the daemon keeps
 * every node it has seen and writes each once.
 */
struct alys_rb_stack {
	__u8 type;		/* ALYS_RB_STACK */
	__u8 flags;		/* ALYS_STACK_FLAG_* (alys_format.h), kept in the trace */
	__u16 nr;		/* frames in ips[]: the new ones; also the walk's count */
	__u16 depth;		/* frames of the whole stack */
	__u16 pad;
	__u64 parent;		/* key of the prefix ips[] hangs from (the root's: none) */
	__u64 key;		/* key of the whole stack, which events carry */
	__u64 ips[ALYS_MAX_FRAMES];	/* innermost first */
};
#define ALYS_RB_STACK_SIZE(nr) (24 + 8 * (nr))

/*
 * An ELF file whose unwind rows are loaded, keyed as the kernel sees the
 * mapped file: the BPF program finds it from a pc through bpf_find_vma.
 */
struct alys_object_key {
	__u64 ino;
	__u32 dev;		/* kernel encoding: major << 20 | minor */
	__u32 pad;
};

struct alys_object {
	__u32 row_first;	/* index into the unwind_rows array */
	__u32 row_count;
	/* p_vaddr - p_offset of the executable PT_LOAD: with the mapping's
	 * start and file offset this gives the load bias. */
	__u64 vaddr_minus_offset;
};

/* Mappings a process has hit, cached by the BPF program itself. */
#define ALYS_PROC_MAPPINGS 32

struct alys_proc_mapping {
	__u64 start, end;
	__u64 bias;		/* runtime address - ELF vaddr */
	__u32 row_first, row_count;
};

struct alys_proc {
	__u32 n;
	__u32 epoch;		/* random, nonzero: names this entry in unwind_memo */
	struct alys_proc_mapping m[ALYS_PROC_MAPPINGS];
};

#endif /* ALYS_EVENTS_H */
