// SPDX-License-Identifier: GPL-2.0
/*
 * alys-bpf kernel side: uprobes on the Boehm GC entry points a Crystal
 * program calls. Each recorded call becomes one ring-buffer event carrying a
 * stack id; stacks are walked here, in the kernel, and deduplicated in the
 * `stacks` map so that each distinct stack crosses to userspace once.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "alys_events.h"
#include "alys_stack_key.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load. */
const volatile __u32 max_frames = ALYS_DEFAULT_FRAMES;
const volatile __u32 unwind_mode = ALYS_UNWIND_DWARF;
/* ELF vaddr of each probe and of GC_gc_no in the object holding libgc: the
 * difference between a probe's runtime ip and its vaddr is the load bias. */
const volatile __u64 probe_vaddr[ALYS_KIND_FREE + 1];
const volatile __u64 gc_no_vaddr;
/* Ring-buffer bytes pending above which the consumer is woken at once. */
const volatile __u64 wakeup_bytes = 1 << 20;
/*
 * ...but not more than once every WAKEUP_GAP_NS: a wakeup is an IPI (an
 * MSR write, which traps to the hypervisor in a VM), and while the
 * consumer is behind, every event finds the buffer above the mark. Woken
 * on every event, a deep-stack workload spent 8% of its time there.
 */
#define WAKEUP_GAP_NS 1000000
/* Sampling: 0 records every call; else the mean of the exponentially
 * distributed byte intervals between samples (see sample.h). */
const volatile __u64 sample_mean;
/* Sampled (bytes:N or refill): only sampled blocks are followed. */
const volatile bool sampled_trace;
/* Attached as uprobe sessions: an entry that returns 1 has no return. */
const volatile bool session_mode;

/*
 * Each session's state (struct alys_sess), by slot: the object and its
 * programs serve up to ALYS_MAX_SESSIONS processes (src/core/bpf_pool.h).
 * Mapped by the daemon.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, ALYS_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct alys_sess);
} sessions SEC(".maps");

/* The slot of a process whose exit the exit_group tracepoint watches. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ALYS_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, __u32);
} slot_of_tgid SEC(".maps");

/* A session's maps are the daemon's to make, one of each by slot: the
 * definitions below the outer maps are templates only. */
#define SESSION_MAPS(inner) \
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS); \
	__uint(max_entries, ALYS_MAX_SESSIONS); \
	__type(key, __u32); \
	__array(values, inner)

/* 64 MiB by default (--ringbuf-size): a deep-stack workload sends ~35 MB/s
 * of stacks and events, and on a busy host the daemon, sharing the CPUs,
 * fell behind by more than 32 MiB's worth when new stacks came fastest. */
struct events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

struct {
	SESSION_MAPS(struct events_map);
} events_of SEC(".maps");

static __always_inline struct alys_sess *sess_at(__u32 slot)
{
	return bpf_map_lookup_elem(&sessions, &slot);
}

/* The session's ring buffer; NULL only if the daemon made none. */
static __always_inline void *events_at(__u32 slot)
{
	slot &= ALYS_MAX_SESSIONS - 1;
	return bpf_map_lookup_elem(&events_of, &slot);
}

/*
 * Keys of the stack prefixes sent to userspace: a two-way set-associative
 * cache in an array, 8 bytes a key, sized by the loader to a power of two
 * (--stack-cache). A key overwritten is sent again when next seen, so the
 * cache bounds kernel memory and never loses a stack. An array, not an LRU
 * hash: a new deep stack caches a dozen prefixes, and LRU inserts that
 * evict took ~1 µs each (15% of a deep workload's time), where an array
 * slot is a plain load or store. Keys are hashes, never 0 (an empty slot).
 */
/* BPF_F_INNER_MAP: a slot's array may have another size than this
 * template (--stack-cache; stack_cache_mask keeps indexes inside it). */
struct stack_cache_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	SESSION_MAPS(struct stack_cache_map);
} stack_cache_of SEC(".maps");
const volatile __u32 stack_cache_mask = ALYS_DEFAULT_STACK_CACHE - 1;

static __always_inline void *stack_cache(__u32 slot)
{
	slot &= ALYS_MAX_SESSIONS - 1;
	return bpf_map_lookup_elem(&stack_cache_of, &slot);
}

/* The two ways of key's set in cache: false when it has none (never). */
static __always_inline bool key_set(void *cache, __u64 key, __u64 **a, __u64 **b)
{
	__u32 i = (__u32)key & stack_cache_mask & ~1u, j = i | 1;

	*a = bpf_map_lookup_elem(cache, &i);
	*b = bpf_map_lookup_elem(cache, &j);
	return *a && *b;
}

static __always_inline bool key_sent(void *cache, __u64 key)
{
	__u64 *a, *b;

	return key_set(cache, key, &a, &b) && (*a == key || *b == key);
}

static __always_inline void key_remember(void *cache, __u64 key)
{
	__u64 *a, *b;

	if (!key_set(cache, key, &a, &b) || *a == key || *b == key)
		return;
	/* an empty way, else one picked by bits the occupants change */
	if (*a && (!*b || ((key ^ *a ^ *b) >> 40 & 1)))
		*b = key;
	else
		*a = key;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ALYS_MAX_SESSIONS * ALYS_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* A call between its entry and return probes. */
struct pending_call {
	__u64 size;
	__u64 old_addr;
	__u64 gc_no_addr;
	__u64 stack_key;
	__u64 sp;		/* the stack pointer at its entry */
	__u64 predicted;	/* the block read at entry, to check (predict.h) */
	__u8 kind;
	__u8 skip;
	__u8 predict;		/* its block to be read at entry */
};

/* A call nested in another (a realloc's malloc, a finalizer's allocation
 * in a collection) runs below it on the same stack, within this. */
#define NEST_SPAN (8ull << 20)

/* Stack pages a walk copies whole, from its first sp up: 60 KiB, the most a
 * task storage value holds (U16_MAX bytes). The compiler's deepest stacks
 * span more than 32 KiB. */
#define ALYS_STACK_PAGES 15
/* The last walk's span copied in one read (copy_last_span): from sp, whose
 * page offset is below 4 KiB, so that it ends inside the pages. */
#define ALYS_SPAN_MAX ((ALYS_STACK_PAGES - 1) * 4096)
_Static_assert(ALYS_STACK_PAGES <= 16, "a span's pages are indexed with & 15");

/* A frame of a walk as the step that found it saw it (unwind_dwarf.h). */
struct walk_frame {
	__u64 ip;		/* the return address, read at cfa - 8 */
	__u64 cfa;
	__u64 bp;		/* rbp after the step */
	__u64 bp_slot;		/* where the step read rbp (0: it did not) */
};

/* What the step that ended a walk read: the return address slot and the
 * saved rbp's, with their values (a slot 0: not read). */
struct walk_end {
	__u64 slot, val;
	__u64 bp_slot, bp_val;
};

/* Frames a walk's ring holds: twice the most a walk has, so that a walk
 * can write its frames apart from the last one's until it meets them. */
#define ALYS_WALK_RING (2 * ALYS_MAX_FRAMES)

/* What a walk found besides its frames (unwind_dwarf.h, "Reusing the
 * previous walk"): its frame k lies at f[(base + k) % ALYS_WALK_RING] of
 * the thread's ring, frame 0's ip being the probe's pc. */
struct walk_meta {
	struct walk_end end;
	__u32 base, nr, flags, epoch, valid;
	__u32 drop;		/* outer frames a cut stack left out (cut_stack) */
};

struct walk_state {
	struct walk_frame f[ALYS_WALK_RING];
	struct walk_meta m[2];	/* m[walk & 1]: this walk's; the other: the last's */
	/* while walking, in map memory rather than the walk's context so
	 * that the verifier does not track them and can prune its states:
	 * the last walk's next frame to look at, whether it may still match,
	 * whether its frames are being checked, and the frame matched */
	__u32 pj, matching, copying, match;
	/* this walk's frame number of the match, and the frames it has
	 * checked in place up to (not including) */
	__u32 match_nr, checked_to;
};

/* Where frame k of the walk whose frame 0 lies at base is in the ring. */
static __always_inline __u32 ring_pos(__u32 base, __u32 k)
{
	return (base + k) & (ALYS_WALK_RING - 1);
}

struct thread_state {
	__u32 slot;		/* its process's session, set by each program */
	__u32 depth;
	__u32 sampling_started;
	__s64 bytes_until_sample;	/* per thread, as tcmalloc and Go do */
	struct pending_call calls[ALYS_MAX_DEPTH];
	/* The stack being walked: too big for the 512-byte BPF stack, and
	 * per-task rather than per-CPU because uprobe programs can be
	 * preempted. */
	struct alys_rb_stack scratch;
	__u32 pages_loaded, pages_bad;	/* of thread_pages: copied, unreadable */
	__u32 words_read, searches;	/* this walk's, for the counters */
	__u32 span_len;		/* bytes from sp copied or mapped at the start */
	__u32 span_mapped;	/* the span read through the direct map: its pages */
	/* their physical addresses (direct_map.h): ALYS_STACK_PAGES of them,
	 * room for 16, the mask of an index into it */
	__u64 span_phys[16];
	/* map_span's: the page table's direct-map address, stored so as to
	 * be read back as a number */
	__u64 pgd;
	__u64 keys[2 * ALYS_MAX_FRAMES];	/* its prefixes' keys (stack_key) */
	__u32 keys_kept;	/* keys[0..keys_kept] hold for this stack too (shared_prefix) */
	__u32 walk;		/* this walk's walks.m[]: walk & 1 */
	struct walk_state walks;
	/* a stop-the-world pause under way on this thread (gc_world_stop),
	 * and the collection around it (its entry: gc_world_stop) */
	__u64 pause_stop_ns, pause_start_ns, pause_key, pause_gc_no_addr;
	__u64 collect_begin_ns;
	/* predict.h: where GC_thread_key lives, in which address space;
	 * EXTRA_BYTES + 1 (0: not read); the blocks read so far */
	__u64 key_addr, key_mm;
	__u32 extra_bytes, predicted;
	/* unwind_dwarf.h: the address space's unwind_procs epoch */
	__u64 proc_mm;
	__u32 proc_epoch;
};

/* Task storage: found without a hash lookup, freed when the thread exits. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* The stack's pages from a walk's first sp up (unwind_dwarf.h), copied
 * whole on first use: one read for a page holds dozens of frames' return
 * addresses. Apart from thread_state: a task storage value is at most
 * U16_MAX bytes. */
struct thread_pages {
	__u8 p[ALYS_STACK_PAGES][4096];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_pages);
} thread_pages SEC(".maps");

/* slot: the session's */
static __always_inline void count_n(__u32 slot, enum alys_counter c, __u64 n)
{
	__u32 key = (slot & (ALYS_MAX_SESSIONS - 1)) * ALYS_CNT_NR + c;
	__u64 *v = bpf_map_lookup_elem(&counters, &key);

	if (v)
		*v += n;
}

static __always_inline void count(__u32 slot, enum alys_counter c)
{
	count_n(slot, c, 1);
}

#include "direct_map.h"
#include "unwind_fp.h"
#include "unwind_dwarf.h"
#include "live.h"
#include "sample.h"
#include "refill.h"
#include "predict.h"

/* Prefixes cached as sent: every ALYS_KEY_STEP-th and the whole stack. A
 * record then repeats at most ALYS_KEY_STEP - 1 frames the daemon knows,
 * and a new stack costs few cache inserts (each an LRU update). */
#define ALYS_KEY_STEP 8

struct key_ctx {
	struct thread_state *st;
	__u32 nr;		/* prefix_key_step: frames */
	/* prefix_key_step: keys[0..from] are known; remember_step:
	 * checkpoints from..to-1 */
	__u32 from, to;
	__u32 slot;		/* the session's */
	__u32 base;		/* the walk's frame 0 in its ring (struct walk_meta) */
};

/* keys[k] from keys[k - 1], ALYS_KEYS_PER_STEP at a time: a bpf_loop
 * step, so that the verifier checks one step, not 128 (the programs are
 * near its limit of a million instructions processed), and few enough
 * calls that short stacks pay little for them. */
#define ALYS_KEYS_PER_STEP 8

static long prefix_key_step(__u32 i, struct key_ctx *c)
{
	struct thread_state *st = c->st;
	__u32 k0 = c->from + i * ALYS_KEYS_PER_STEP;
	/* the chain in a register: a key stored and loaded again would add a
	 * store's forwarding to each link */
	__u64 key = st->keys[k0 & (2 * ALYS_MAX_FRAMES - 1)];

#pragma unroll
	for (__u32 j = 0; j < ALYS_KEYS_PER_STEP; j++) {
		__u32 k = k0 + j + 1;

		if (k > c->nr)
			return 1;
		key = alys_stack_child_key(key, st->walks.f[ring_pos(c->base, c->nr - k)].ip);
		st->keys[k & (2 * ALYS_MAX_FRAMES - 1)] = key;
	}
	return 0;
}

/* The record's frames, innermost first, from the walk's ring. */
static long record_ips_step(__u32 i, struct key_ctx *c)
{
	struct thread_state *st = c->st;

#pragma unroll
	for (__u32 j = 0; j < ALYS_KEYS_PER_STEP; j++) {
		__u32 k = i * ALYS_KEYS_PER_STEP + j;

		if (k >= c->nr)
			return 1;
		st->scratch.ips[k & (ALYS_MAX_FRAMES - 1)] =
			st->walks.f[ring_pos(c->base, k)].ip;
	}
	return 0;
}

static long remember_step(__u32 i, struct key_ctx *c)
{
	__u32 k = (c->from + i) * ALYS_KEY_STEP;

	void *cache = stack_cache(c->slot);

	if (c->from + i >= c->to || !cache)
		return 1;
	key_remember(cache, c->st->keys[k & (2 * ALYS_MAX_FRAMES - 1)]);
	return 0;
}

/*
 * The key of the stack in st->scratch, sending first the frames the daemon
 * may not know: those below the deepest cached prefix. keys[k] names the k
 * outermost frames (alys_stack_key.h). A prefix is cached only after its
 * record is in the ring buffer, so a cached prefix is one the daemon has
 * read (records are read in reservation order). The search assumes that a
 * cached checkpoint's shallower ones are cached too; an eviction that
 * breaks this only makes the record longer. Two CPUs may both send a node,
 * and an evicted one is sent again: the daemon writes each once. Only a
 * full ring buffer loses a stack, and then none of its prefixes are cached.
 */
static __always_inline __u64 stack_key(struct thread_state *st)
{
	struct alys_rb_stack *s = &st->scratch;
	struct key_ctx c = { .st = st, .nr = s->nr, .slot = st->slot,
			     .base = st->walks.m[st->walk & 1].base };
	__u32 nr = s->nr, lo = 0, hi, mid, kept;
	void *cache = stack_cache(st->slot), *rb = events_at(st->slot);
	__u64 size, leaf;

	if (nr > ALYS_MAX_FRAMES || !cache || !rb)
		return 0;
	/* the outer frames the walk took from the last one keep their keys */
	c.from = kept = st->keys_kept <= nr ? st->keys_kept : 0;
	st->keys_kept = 0;
	if (!c.from)
		st->keys[0] = alys_stack_root_key(s->flags);
	bpf_loop(ALYS_MAX_FRAMES / ALYS_KEYS_PER_STEP + 1, prefix_key_step, &c, 0);
	leaf = st->keys[nr & (2 * ALYS_MAX_FRAMES - 1)];
	if (key_sent(cache, leaf))
		return leaf;
	/* checkpoints 1..hi-1 lie strictly inside the stack */
	hi = (nr - 1) / ALYS_KEY_STEP + 1;
	/* The deepest checkpoint of the prefix the last stack shares was sent
	 * with it or found sent then: tried first, it leaves the search the
	 * few checkpoints below it (each a likely cache miss in the 8 MiB). */
	mid = kept / ALYS_KEY_STEP;
	if (mid > 0 && mid < hi &&
	    key_sent(cache, st->keys[(mid * ALYS_KEY_STEP) & (2 * ALYS_MAX_FRAMES - 1)]))
		lo = mid;
	for (int i = 0; i < 5; i++) {	/* 2^5 > ALYS_MAX_FRAMES / ALYS_KEY_STEP */
		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		if (key_sent(cache, st->keys[(mid * ALYS_KEY_STEP) & (2 * ALYS_MAX_FRAMES - 1)]))
			lo = mid;
		else
			hi = mid;
	}
	s->type = ALYS_RB_STACK;
	s->depth = nr;
	s->nr = nr - lo * ALYS_KEY_STEP;
	c.nr = s->nr;
	bpf_loop(ALYS_MAX_FRAMES / ALYS_KEYS_PER_STEP, record_ips_step, &c, 0);
	s->pad = 0;
	s->parent = st->keys[(lo * ALYS_KEY_STEP) & (2 * ALYS_MAX_FRAMES - 1)];
	s->key = leaf;
	size = ALYS_RB_STACK_SIZE((__u64)(nr - lo * ALYS_KEY_STEP));
	/* Opaque to the compiler: the size checked is the size passed, not
	 * one read again from memory that the verifier cannot bound. */
	asm volatile("" : "+r"(size));
	if (size > sizeof(*s))
		return 0;
	if (bpf_ringbuf_output(rb, s, size, BPF_RB_NO_WAKEUP)) {
		count(st->slot, ALYS_CNT_RB_DROP_STACK);
		return 0;
	}
	c.from = lo + 1;
	c.to = (nr - 1) / ALYS_KEY_STEP + 1;
	bpf_loop(ALYS_MAX_FRAMES / ALYS_KEY_STEP, remember_step, &c, 0);
	key_remember(cache, leaf);
	count(st->slot, ALYS_CNT_STACK_SENT);
	count_n(st->slot, ALYS_CNT_STACK_FRAMES_SENT, nr - lo * ALYS_KEY_STEP);
	return leaf;
}

/* The window of a cut stack's outermost frames its cut is chosen in: an
 * eighth of the limit (16 of 127 frames; 1 of 4). */
#define ALYS_CUT_WINDOW(n) (((n) + 7) / 8)

/*
 * A stack cut at the limit ends at the frame of its outermost
 * ALYS_CUT_WINDOW whose return address's offset in its page hashes
 * lowest (the outermost of equals), not at the limit itself: the choice follows the frames, so a
 * recursion's cut stacks whose innermost frames are a few more or fewer
 * share their outermost frame, their prefixes and the nodes sent for
 * them. Cut at the limit, any change of depth moved the outermost frame,
 * and a record repeated all 127 frames the daemon had under other roots
 * (15% of the compiler's events). The same frames always cut the same way.
 */
static __noinline void cut_stack(struct thread_state *st)
{
	struct alys_rb_stack *s = &st->scratch;
	struct walk_meta *w = &st->walks.m[st->walk & 1];
	__u32 nr = s->nr, win, cut = 0;
	__u64 best = ~0ULL;

	w->drop = 0;
	if (!(s->flags & ALYS_STACK_FLAG_TRUNCATED) || nr < 2 || nr > ALYS_MAX_FRAMES)
		return;
	win = ALYS_CUT_WINDOW(nr);
#pragma unroll
	for (__u32 i = 0; i < ALYS_CUT_WINDOW(ALYS_MAX_FRAMES); i++) {
		__u32 k = nr - 1 - i;
		__u64 h;

		if (i >= win)
			break;
		/* the address's offset in its page: the same in every run of
		 * the program, where the load address is not */
		h = (st->walks.f[ring_pos(w->base, k)].ip & 4095) * 0x9e3779b97f4a7c15ULL;
		if (h < best) {
			best = h;
			cut = k;
		}
	}
	w->drop = nr - 1 - cut;
	s->nr = cut + 1;
}

/*
 * The outer frames this stack shares with the thread's last, and so the
 * keys of their prefixes (stack_key): from the frame where this walk met
 * the last one to its outermost, when every one of them was checked in
 * place and the outermost recorded is the last stack's outermost recorded
 * (the same place in the walks' ring, the same flags).
 */
static __always_inline void shared_prefix(struct thread_state *st)
{
	struct walk_state *ws = &st->walks;
	struct walk_meta *w = &ws->m[st->walk & 1], *old = &ws->m[(st->walk + 1) & 1];
	__u32 rec = st->scratch.nr, orec = old->nr - old->drop;

	st->keys_kept = 0;
	if (unwind_mode != ALYS_UNWIND_DWARF || !ws->match || !w->valid || !old->valid ||
	    st->scratch.flags != old->flags || old->drop >= old->nr)
		return;
	if (rec <= ws->match_nr || ws->checked_to < rec ||
	    ring_pos(w->base, rec - 1) != ring_pos(old->base, orec - 1))
		return;
	st->keys_kept = rec - ws->match_nr;
}

static __always_inline __u64 collect_stack(struct pt_regs *regs,
					   struct thread_state *st)
{
	struct alys_rb_stack *s = &st->scratch;

	/* a direct load: the task is trusted (BTF), no helper call */
	__u64 mm = (__u64)bpf_get_current_task_btf()->mm;

	s->nr = 0;
	s->flags = 0;
	if (unwind_mode == ALYS_UNWIND_DWARF)
		unwind_dwarf(regs, st, mm);
	else
		unwind_fp(regs, st);
	if (s->nr == 0)
		return 0;
	cut_stack(st);
	shared_prefix(st);
	return stack_key(st);
}

/* objects: how many objects of size the event stands for, when the kernel
 * counted them (a refill's list); 0 for one call. The daemon turns that
 * into the event's weight (tracer.c, event_weight): one place for it. */
static __always_inline void submit_counted(struct alys_sess *S, __u8 kind, __u8 depth,
					   __u64 size, __u64 addr, __u64 old_addr,
					   __u64 stack_key, __u32 gc_no, __u64 objects)
{
	struct alys_rb_event *e;
	__u64 flags = BPF_RB_NO_WAKEUP, now;
	void *rb = events_at(S->slot);

	if (!rb)
		return;
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		count(S->slot, ALYS_CNT_RB_DROP_EVENT);
		return;
	}
	e->type = ALYS_RB_EVENT;
	e->kind = kind;
	e->depth = depth;
	e->pad = 0;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->ts_ns = now = bpf_ktime_get_ns();
	e->size = size;
	e->addr = addr;
	e->old_addr = old_addr;
	e->objects = objects;
	e->gc_no = gc_no;
	e->stack_key = stack_key;
	if (now - S->last_wakeup_ns >= WAKEUP_GAP_NS &&
	    bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= wakeup_bytes) {
		S->last_wakeup_ns = now;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(e, flags);
}

static __always_inline void submit_event(struct alys_sess *S, __u8 kind, __u8 depth,
					 __u64 size, __u64 addr, __u64 old_addr,
					 __u64 stack_key, __u32 gc_no)
{
	submit_counted(S, kind, depth, size, addr, old_addr, stack_key, gc_no, 0);
}

/* Runtime minus ELF address of the object holding libgc: at a uprobe,
 * regs->ip is the probed instruction's address. */
static __always_inline __u64 bias_of(struct pt_regs *regs, __u64 probe)
{
	return PT_REGS_IP(regs) - probe;
}

/* GC_gc_no now, seen from a probe of kind; 0 when unknown. */
static __always_inline __u32 gc_no_of(struct alys_sess *S, struct pt_regs *regs, __u8 kind)
{
	__u64 pv = probe_vaddr[kind & 7];

	return pv ? gc_no_at(S, bias_of(regs, pv)) : 0;
}

/* The session a probe serves: its attach cookie's top byte. */
static __always_inline struct alys_sess *probe_sess(struct pt_regs *ctx)
{
	return sess_at(bpf_get_attach_cookie(ctx) >> ALYS_COOKIE_SLOT_SHIFT);
}

/* This thread's state, made if create (and counted if it cannot be). */
static __always_inline struct thread_state *thread_of(struct alys_sess *S, bool create)
{
	struct thread_state *st;

	st = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				  create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!st) {
		if (create)
			count(S->slot, ALYS_CNT_NO_THREAD_STATE);
		return NULL;
	}
	st->slot = S->slot;
	return st;
}

/* A call done, its block addr: at its return, or at its entry when the
 * block was read there (predict.h). */
static __always_inline void finish_call(struct alys_sess *S, struct pending_call *c, __u32 d,
					__u64 addr)
{
	__u64 bias = c->gc_no_addr ? c->gc_no_addr - gc_no_vaddr : 0;
	__u32 gc_no = 0;

	/* The collection this allocation ran is judged before its block,
	 * which may reuse a slot that collection freed, is tracked. */
	if (c->gc_no_addr) {
		gc_no = gc_no_at(S, bias);
		scan_if_collected(S, bias, SCAN_IMPLICIT, gc_no);
	}
	if (c->skip)
		return;
	if (c->kind == ALYS_KIND_REALLOC)
		untrack_block(S, c->old_addr);
	/* Before the event: a death found by reuse precedes the new block. */
	if (c->gc_no_addr)
		track_block(S, bias, addr, c->size, c->kind != ALYS_KIND_REALLOC, gc_no);
	submit_event(S, c->kind, d, c->size, addr, c->old_addr, c->stack_key, gc_no);
}

/* pv: the probe's ELF address, 0 when unknown. Returns what a session
 * entry returns: 1 when no return probe is needed. */
static __always_inline int on_entry(struct alys_sess *S, struct pt_regs *regs, __u8 kind,
				    __u64 pv, __u64 size, __u64 old_addr)
{
	struct thread_state *st;
	struct pending_call *c;
	bool nested_in_realloc, sampled;
	__u64 sp;
	__u32 d;

	st = thread_of(S, true);
	if (!st)
		return 1;
	d = st->depth;
	/* The calls pending are not around this one (the innermost's frame is
	 * not above it): they returned without their return probe firing
	 * (seen with several threads allocating as the probes attach). Taken
	 * off and counted, instead of every later call of the thread counted
	 * as too deep. */
	sp = PT_REGS_SP(regs);
	if (d > ALYS_MAX_DEPTH ||
	    (d > 0 && !(st->calls[(d - 1) & (ALYS_MAX_DEPTH - 1)].sp > sp &&
			st->calls[(d - 1) & (ALYS_MAX_DEPTH - 1)].sp - sp < NEST_SPAN))) {
		count(S->slot, ALYS_CNT_RETURN_MISSED);
		d = 0;
		st->depth = 0;
	}
	/* GC_realloc frees and allocates through the same entry points: those
	 * inner calls are part of the realloc event. Finalizers that allocate
	 * inside a collection are real allocations and are kept. */
	nested_in_realloc = d > 0 && d <= ALYS_MAX_DEPTH &&
		st->calls[(d - 1) & (ALYS_MAX_DEPTH - 1)].kind == ALYS_KIND_REALLOC;
	sampled = !nested_in_realloc && sample_call(st, size);
	if (kind == ALYS_KIND_REALLOC && !sampled && !nested_in_realloc && sampled_trace)
		forget_sampled(S, regs, st, old_addr, d);
	/* Without its return the call need not be tracked at all; a realloc
	 * is, so that what it calls knows it is inside one. A collection
	 * since the last probe is read here then, else at the return, which
	 * reads it before its own block is followed (a user read less). */
	if (session_mode && !sampled && kind != ALYS_KIND_REALLOC) {
		maybe_scan(S, bias_of(regs, pv), SCAN_IMPLICIT);
		return 1;
	}
	st->depth = d + 1;
	if (d >= ALYS_MAX_DEPTH) {
		count(S->slot, ALYS_CNT_DEPTH_OVERFLOW);
		return 0;
	}
	/* The slot by the depth read back, not by d: d is 0 where d > 0 was
	 * found false above, and a slot at a constant offset there and at a
	 * variable one elsewhere would have the verifier check the walk for
	 * each. */
	c = &st->calls[(*(volatile __u32 *)&st->depth - 1) & (ALYS_MAX_DEPTH - 1)];
	c->kind = kind;
	c->size = size;
	c->sp = sp;
	c->old_addr = old_addr;
	c->skip = !sampled;
	c->gc_no_addr = gc_no_vaddr && pv ? bias_of(regs, pv) + gc_no_vaddr : 0;
	c->predicted = 0;
	c->predict = session_mode && kind != ALYS_KIND_REALLOC && pv;
	if (c->skip)
		return 0;
	c->stack_key = collect_stack(regs, st);
	/* Read back, not tested again: a realloc or not and a probe address
	 * or none, told apart before the walk and tested after it, would have
	 * the verifier check the walk once for each. */
	if (*(volatile __u8 *)&c->predict) {
		c->predicted = predict_block(S, st, kind, bias_of(regs, pv), size);
		if (c->predicted && predict_trusted(st)) {
			st->depth = d;
			count(S->slot, ALYS_CNT_PREDICTED);
			finish_call(S, c, d, c->predicted);
			return 1;
		}
	}
	return 0;
}

static __always_inline int on_return(struct alys_sess *S, struct pt_regs *regs)
{
	struct thread_state *st;
	struct pending_call *c;
	__u32 d;

	st = thread_of(S, false);
	/* No state: the call began before the probes were attached. */
	if (!st || st->depth == 0)
		return 0;
	d = --st->depth;
	if (d >= ALYS_MAX_DEPTH)
		return 0;
	c = &st->calls[d & (ALYS_MAX_DEPTH - 1)];
	if (c->predicted && !c->skip)
		predict_check(S, c->predicted, PT_REGS_RC(regs));
	finish_call(S, c, d, PT_REGS_RC(regs));
	return 0;
}

/*
 * GC_malloc, GC_malloc_atomic and GC_realloc through one program: the
 * verifier checks the unwinder once, not once per entry point. The attach
 * cookie is the kind, above its 8 bits the probe's ELF address, and in its
 * top byte the session's slot (not looked up by kind: an index makes the
 * verifier tell kinds apart, and check the program once per kind again).
 */
static __always_inline int on_alloc_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), a0 = PT_REGS_PARM1(ctx);
	struct alys_sess *S = sess_at(cookie >> ALYS_COOKIE_SLOT_SHIFT);
	__u8 kind = (__u8)cookie;
	bool realloc = kind == ALYS_KIND_REALLOC;

	if (!S)
		return 1;
	return on_entry(S, ctx, kind, (cookie & ((1ULL << ALYS_COOKIE_SLOT_SHIFT) - 1)) >> 8,
			realloc ? PT_REGS_PARM2(ctx) : a0, realloc ? a0 : 0);
}

SEC("uprobe")
int gc_alloc_entry(struct pt_regs *ctx)
{
	on_alloc_entry(ctx);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(gc_alloc_return)
{
	struct alys_sess *S = probe_sess(ctx);

	return S ? on_return(S, ctx) : 0;
}

/* --sample refill: medium and large objects, every call (refill.h). The
 * loader points probe_vaddr[] of both allocation kinds at this probe. */
SEC("uprobe")
int BPF_KPROBE(gc_kind_global_entry, __u64 size, __u64 gc_kind)
{
	struct alys_sess *S = probe_sess(ctx);

	if (!S || !in_duty_window(S))
		return 0;
	on_entry(S, ctx, kind_of_gc_kind(gc_kind), probe_vaddr[ALYS_KIND_MALLOC], size, 0);
	return 0;
}

/* --sample refill: a small-object free list was just refilled. */
SEC("uprobe")
int gc_refill(struct pt_regs *ctx)
{
	struct alys_sess *S = probe_sess(ctx);
	struct thread_state *st;
	__u64 bias = bias_of(ctx, refill_vaddr), head = 0, size;
	__u32 n, gc_no;
	__u8 kind = ALYS_KIND_MALLOC;

	if (!S)
		return 0;
	gc_no = gc_no_at(S, bias);
	scan_if_collected(S, bias, SCAN_IMPLICIT, gc_no);
	if (!in_duty_window(S))
		return 0;
	if (bpf_probe_read_user(&head, sizeof(head), (void *)reg_value(ctx, refill_fl_reg)) ||
	    !head)
		return 0;	/* out of memory: the collector's oom handler runs */
	st = thread_of(S, true);
	if (!st)
		return 0;
	n = list_length(S, head);
	size = 0;
	if (refill_size_reg >= 0)
		size = reg_value(ctx, refill_size_reg);
	else if (bpf_probe_read_user(&size, sizeof(size),
				     (void *)(PT_REGS_SP(ctx) + refill_size_sp_off)))
		size = 0;
	if (!size || size > REFILL_MAX_SIZE) {
		count(S->slot, ALYS_CNT_REFILL_BAD_SIZE);
		return 0;
	}
	if (refill_kind_reg >= 0)
		kind = kind_of_gc_kind(reg_value(ctx, refill_kind_reg));
	if (gc_no_vaddr)
		track_block(S, bias, head, size, true, gc_no);
	count(S->slot, ALYS_CNT_REFILL);
	submit_counted(S, kind, 0, size, head, 0, collect_stack(ctx, st), gc_no, n);
	return 0;
}

/* --sample refill: a GC_realloc that keeps its block allocates nothing the
 * refill probes see; record it as a full trace would. One that moves
 * allocates through GC_malloc_kind and is seen there. */
SEC("uprobe")
int BPF_KPROBE(gc_realloc_inplace, __u64 p, __u64 lb)
{
	struct alys_sess *S = probe_sess(ctx);
	struct thread_state *st;
	__u64 bias;

	if (!S || !p || !lb || !in_duty_window(S))
		return 0;
	bias = bias_of(ctx, probe_vaddr[ALYS_KIND_REALLOC]);
	if (!realloc_in_place(bias, p, lb))
		return 0;
	st = thread_of(S, true);
	if (!st)
		return 0;
	count(S->slot, ALYS_CNT_REALLOC_IN_PLACE);
	submit_event(S, ALYS_KIND_REALLOC, 0, lb, p, p, collect_stack(ctx, st),
		     gc_no_at(S, bias));
	return 0;
}

/* GC_free returns nothing we need: one probe, no return probe. */
SEC("uprobe")
int BPF_KPROBE(gc_free_entry, __u64 addr)
{
	struct alys_sess *S = probe_sess(ctx);
	struct thread_state *st;
	__u32 d;

	if (!S || !addr)
		return 0;
	if (probe_vaddr[ALYS_KIND_FREE])
		maybe_scan(S, bias_of(ctx, probe_vaddr[ALYS_KIND_FREE]), SCAN_IMPLICIT);
	st = thread_of(S, true);
	if (!st)
		return 0;
	d = st->depth;
	if (d > 0 && d <= ALYS_MAX_DEPTH &&
	    st->calls[(d - 1) & (ALYS_MAX_DEPTH - 1)].kind == ALYS_KIND_REALLOC)
		return 0;
	/* Sampled: only the frees of sampled blocks matter. */
	if (!untrack_block(S, addr) && sampled_trace)
		return 0;
	submit_event(S, ALYS_KIND_FREE, d, 0, addr, 0, collect_stack(ctx, st),
		     gc_no_of(S, ctx, ALYS_KIND_FREE));
	return 0;
}

/*
 * The same entry points attached as uprobe sessions (Linux 6.13+): one
 * program runs at entry and, unless the entry returned 1, at return, so an
 * unsampled call costs no return probe at all.
 */
extern bool bpf_session_is_return(void) __ksym __weak;

SEC("uprobe")
int gc_alloc_session(struct pt_regs *ctx)
{
	struct alys_sess *S;

	if (bpf_session_is_return()) {
		S = probe_sess(ctx);
		return S ? on_return(S, ctx) : 0;
	}
	return on_alloc_entry(ctx);
}

/* GC_gcollect clears the marks of the last collection first: read them
 * before, if no allocation did since that collection. */
SEC("uprobe")
int BPF_KPROBE(gc_collect_entry)
{
	struct alys_sess *S = probe_sess(ctx);
	__u64 bias, cur = 0;

	if (!S || !collect_vaddr)
		return 0;
	bias = bias_of(ctx, collect_vaddr);
	maybe_scan(S, bias, SCAN_EXPLICIT);
	if (gc_no_vaddr && read_u64(&cur, bias + gc_no_vaddr))
		S->live_explicit_gc = (__u32)cur + 1;
	return 0;
}

/*
 * The program's exit: collections since the last scan (the time budget
 * skips most) would go unread, and their dead reported as in use. Read the
 * last collection's marks here, where the memory is still there. Not from
 * inside a GC call (a collection may be half done): counted instead.
 */
SEC("tracepoint/syscalls/sys_enter_exit_group")
int exit_group_enter(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, *slot;
	struct thread_state *st;
	struct alys_sess *S;

	slot = bpf_map_lookup_elem(&slot_of_tgid, &tgid);
	if (!slot)
		return 0;
	S = sess_at(*slot);
	if (!S || !S->live_bias)
		return 0;
	st = thread_of(S, false);
	if (st && st->depth) {
		count(S->slot, ALYS_CNT_LIVE_EXIT_IN_GC);
		return 0;
	}
	maybe_scan(S, S->live_bias, SCAN_END);
	return 0;
}

/* Detaching with --duty: the refill probes may be away. Attached at the
 * allocation entries while the daemon waits for the end scan. */
SEC("uprobe")
int end_scan_entry(struct pt_regs *ctx)
{
	struct alys_sess *S = probe_sess(ctx);

	if (S && S->live_end_request && S->live_bias)
		maybe_scan(S, S->live_bias, SCAN_IMPLICIT);
	return 0;
}

/*
 * Stop-the-world pauses: GC_stop_world's entry (the collecting thread, the
 * lock held; its stack leads to what triggered the collection) and
 * GC_start_world's return, when every thread runs again. Where the probes
 * also bound the collection around the pause (GC_try_to_collect_inner's
 * entry and return), the stack is walked at its entry: a walk from
 * GC_stop_world would meet that function's return address replaced by its
 * return probe's trampoline. Two to four probe hits a collection, in every
 * mode.
 */
const volatile __u64 world_stop_vaddr;	/* GC_stop_world's probe */
const volatile __u64 collect_inner_vaddr;	/* GC_try_to_collect_inner's, 0: none */

/* The stack of what made the collector work here: an allocation under way
 * (its entry walked, its return probe pending) triggered it, and a walk
 * from here would stop at its return address, replaced by the
 * trampoline; else (GC.collect, an unsampled call) walked here. */
static __always_inline __u64 trigger_stack(struct pt_regs *ctx, struct thread_state *st)
{
	__u32 d = st->depth;
	struct pending_call *c =
		d > 0 && d <= ALYS_MAX_DEPTH ? &st->calls[(d - 1) & (ALYS_MAX_DEPTH - 1)] : NULL;
	__u64 sp = PT_REGS_SP(ctx);

	if (c && !c->skip && c->stack_key && c->sp > sp && c->sp - sp < NEST_SPAN)
		return c->stack_key;
	return collect_stack(ctx, st);
}

/* At GC_stop_world, and (cookie ALYS_COOKIE_COLLECT) at the collection's
 * entry: one program, so that the walk is verified once. */
SEC("uprobe")
int gc_world_stop(struct pt_regs *ctx)
{
	struct alys_sess *S = probe_sess(ctx);
	bool begin = bpf_get_attach_cookie(ctx) & ALYS_COOKIE_COLLECT;
	struct thread_state *st;
	__u64 pv;

	if (!S)
		return 0;
	/* GC_gc_no may change from here to the restart (gc_no_at): the flag
	 * first, so that a program that sees the new count sees it set */
	if (!begin) {
		S->gc_world_stopped = 1;
		__sync_fetch_and_add(&S->gc_world_gen, 1);
	}
	st = thread_of(S, true);
	if (!st)
		return 0;
	/* the stop inside a collection whose entry was walked */
	if (!begin && st->collect_begin_ns) {
		st->pause_start_ns = 0;
		st->pause_stop_ns = bpf_ktime_get_ns();
		return 0;
	}
	/* walked (if it is) before the pause is stamped */
	st->pause_key = trigger_stack(ctx, st);
	/* read again: kept across the walk, the verifier checks it twice */
	begin = bpf_get_attach_cookie(ctx) & ALYS_COOKIE_COLLECT;
	pv = begin ? collect_inner_vaddr : world_stop_vaddr;
	st->pause_gc_no_addr = gc_no_vaddr && pv ? bias_of(ctx, pv) + gc_no_vaddr : 0;
	/* no restart from an earlier pause may stand for this one's */
	st->pause_start_ns = 0;
	if (begin) {
		st->collect_begin_ns = bpf_ktime_get_ns();
		st->pause_stop_ns = 0;
	} else {
		st->pause_stop_ns = bpf_ktime_get_ns();
	}
	return 0;
}

/* The pause's record; end: when the collection around it returned (0:
 * not measured). */
static __always_inline void submit_pause(struct alys_sess *S, struct thread_state *st,
					 __u64 end)
{
	struct alys_rb_pause *p;
	__u64 gc_no = 0;
	void *rb = events_at(S->slot);

	if (!rb)
		return;
	p = bpf_ringbuf_reserve(rb, sizeof(*p), 0);
	if (!p) {
		count(S->slot, ALYS_CNT_RB_DROP_PAUSE);
		return;
	}
	if (st->pause_gc_no_addr)
		read_u64(&gc_no, st->pause_gc_no_addr);
	p->type = ALYS_RB_PAUSE;
	p->pad[0] = p->pad[1] = p->pad[2] = 0;
	p->pad2 = 0;
	p->tid = (__u32)bpf_get_current_pid_tgid();
	p->gc_no = (__u32)gc_no;
	p->stop_ns = st->pause_stop_ns;
	p->start_ns = st->pause_start_ns;
	p->stack_key = st->pause_key;
	p->begin_ns = end ? st->collect_begin_ns : 0;
	p->end_ns = end;
	/* No wakeup: the reader polls at a period. Woken here, it would take
	 * the CPU as the collection returns, before the program runs on,
	 * and the program's own timing of it would carry the tracer's work. */
	bpf_ringbuf_submit(p, BPF_RB_NO_WAKEUP);
}

SEC("uretprobe")
int gc_world_started(struct pt_regs *ctx)
{
	struct alys_sess *S = probe_sess(ctx);
	struct thread_state *st;

	if (!S)
		return 0;
	/* values read before now are stale (gc_no_at): the count first */
	__sync_fetch_and_add(&S->gc_world_gen, 1);
	S->gc_world_stopped = 0;
	st = thread_of(S, false);
	/* no stop seen: attached in between */
	if (!st || !st->pause_stop_ns)
		return 0;
	/* a stop and its start both seen: every collection from now on is
	 * (until the daemon, detaching the probes, makes it 2 for good) */
	__sync_val_compare_and_swap(&S->gc_no_known, 0, 1);
	st->pause_start_ns = bpf_ktime_get_ns();
	/* inside a collection the probes follow: written as it returns */
	if (st->collect_begin_ns)
		return 0;
	submit_pause(S, st, 0);
	st->pause_stop_ns = 0;
	return 0;
}

/* GC_try_to_collect_inner's return: the whole collection, the lock held,
 * the world stopped for part of it (its entry: gc_world_stop). */
SEC("uretprobe")
int gc_collect_end(struct pt_regs *ctx)
{
	struct alys_sess *S = probe_sess(ctx);
	struct thread_state *st = S ? thread_of(S, false) : NULL;
	__u64 now = bpf_ktime_get_ns();

	if (!st || !st->collect_begin_ns)
		return 0;
	/* a collection abandoned before the stop has no pause */
	if (st->pause_stop_ns && st->pause_start_ns)
		submit_pause(S, st, now);
	st->collect_begin_ns = 0;
	st->pause_stop_ns = 0;
	return 0;
}

/*
 * The heap's growth: a probe on GC_expand_hp_inner's call of
 * GC_add_to_heap (its bytes in rsi), once per section the collector adds.
 * The stack, as the pause's: the pending allocation's, else walked here.
 */
const volatile __u64 heap_grow_vaddr;

SEC("uprobe")
int gc_heap_grow(struct pt_regs *ctx)
{
	struct alys_sess *S = probe_sess(ctx);
	struct thread_state *st;
	struct alys_rb_grow *g;
	void *rb;
	__u64 gc_no = 0, key;

	if (!S)
		return 0;
	st = thread_of(S, true);
	rb = events_at(S->slot);
	if (!st || !rb)
		return 0;
	key = trigger_stack(ctx, st);
	if (gc_no_vaddr && heap_grow_vaddr)
		read_u64(&gc_no, bias_of(ctx, heap_grow_vaddr) + gc_no_vaddr);
	g = bpf_ringbuf_reserve(rb, sizeof(*g), 0);
	if (!g) {
		count(S->slot, ALYS_CNT_RB_DROP_GROW);
		return 0;
	}
	g->type = ALYS_RB_GROW;
	g->pad[0] = g->pad[1] = g->pad[2] = 0;
	g->pad2 = 0;
	g->tid = (__u32)bpf_get_current_pid_tgid();
	g->gc_no = (__u32)gc_no;
	g->ts_ns = bpf_ktime_get_ns();
	g->bytes = PT_REGS_PARM2(ctx);
	g->stack_key = key;
	bpf_ringbuf_submit(g, BPF_RB_NO_WAKEUP);	/* as submit_pause's */
	return 0;
}

/* --empty-probes: the same probes doing nothing, the floor benchmarks
 * compare against. */
SEC("uprobe")
int empty_entry(struct pt_regs *ctx)
{
	return 0;
}

SEC("uretprobe")
int empty_return(struct pt_regs *ctx)
{
	return 0;
}

/*
 * --census. The program's start-of-collection callback runs before the
 * collector clears the previous collection's marks (GC_notify_full_gc, then
 * GC_clear_marks): stopping the target there lets the daemon walk a heap
 * whose mark bytes say exactly what that collection kept. SIGSTOP is
 * delivered as the probe returns to user mode, before the callback's body.
 */
const volatile __u64 setcb_vaddr;	/* GC_set_start_callback's probe */

static __always_inline void census_stop(struct alys_sess *S, __u8 what, __u64 arg,
					__u64 bias, __u32 gc_no)
{
	struct alys_rb_census *c;
	void *rb = events_at(S->slot);

	if (!rb)
		return;
	c = bpf_ringbuf_reserve(rb, sizeof(*c), 0);
	if (!c) {
		count(S->slot, ALYS_CNT_RB_DROP_EVENT);
		return;
	}
	c->type = ALYS_RB_CENSUS;
	c->what = what;
	c->pad = 0;
	c->gc_no = gc_no;
	c->ts_ns = bpf_ktime_get_ns();
	c->arg = arg;
	c->bias = bias;
	bpf_ringbuf_submit(c, BPF_RB_FORCE_WAKEUP);
	bpf_send_signal(19 /* SIGSTOP */);
}

SEC("uprobe")
int BPF_KPROBE(census_setcb_entry, __u64 callback)
{
	struct alys_sess *S = probe_sess(ctx);

	if (S && callback)
		census_stop(S, 0, callback, bias_of(ctx, setcb_vaddr), 0);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(census_trigger)
{
	struct alys_sess *S = probe_sess(ctx);
	__u32 gc_no = 0, every;

	if (!S || !S->census_gc_no_addr ||
	    bpf_probe_read_user(&gc_no, sizeof(gc_no), (void *)S->census_gc_no_addr))
		return 0;
	every = S->census_every ? S->census_every : 1;
	if (gc_no == 0 || gc_no % every || gc_no == S->census_last_gc)
		return 0;
	S->census_last_gc = gc_no;
	census_stop(S, 1, 0, 0, gc_no);
	return 0;
}
