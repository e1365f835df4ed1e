/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Liveness: which tracked blocks did a collection reclaim? Boehm frees
 * nothing explicitly; it marks what is reachable, then sweeps lazily. Its
 * mark bytes, read after a collection's marking and before the next
 * collection clears them, say exactly what it found dead. GC_gc_no is
 * bumped when marking is done, so the first probe hit of any GC entry point
 * that sees a new GC_gc_no (including the return of the allocation that ran
 * the collection, before its own block is tracked, and GC_gcollect before
 * it clears the marks) walks the tracked set once and reports every block
 * allocated before that collection whose mark byte is clear.
 *
 * HDR(p) and the mark byte are found with offsets the daemon derives from
 * the collector's own code (src/gc/gc_layout.c); the first ALYS_LIVE_VERIFY_N
 * allocations check them (key, hb_sz, block alignment) before any mark is
 * trusted. If ALYS_LIVE_FAIL_N checks fail first (a single one may have raced
 * the collector or another thread), or the layout could not be derived at all,
 * deaths are only found when an address is handed out again (reuse), which
 * misses blocks never reused: the daemon says so.
 */
#ifndef ALYS_LIVE_H
#define ALYS_LIVE_H

const volatile __u32 live_mode;		/* enum alys_live_mode */
const volatile __u64 arrays_vaddr;	/* GC_arrays */
const volatile __u64 collect_vaddr;	/* GC_gcollect's probe */
const volatile __u32 top_index_off, bi_key_off, bi_link_off;
const volatile __u32 hb_sz_off, hb_flags_off, hb_marks_off, free_blk;
const volatile __u32 top_mask, bottom_mask;
const volatile __u32 hi_shift, log_hblk, granule_shift;
/* tests (ALYS_BPF_LAYOUT_TEST=flaky): checks taken as failed first */
const volatile __u32 live_test_fail_first;

/* A session's live_* fields (struct alys_sess) are its liveness state. */

/*
 * Why a scan runs. The end scan reads the last collection's marks when the
 * program exits (or the daemon detaches) whatever the time budget, even if
 * that collection was read already: its record then counts what is still
 * followed, so that no death before the last collection goes unreported
 * and what could not be judged is counted, not lost.
 */
enum scan_why { SCAN_IMPLICIT, SCAN_EXPLICIT, SCAN_END };

/*
 * A scan costs ~1 ms per 256K buckets of the tracked map whatever it holds,
 * and a small heap collects every few hundred KiB: scanning after each
 * collection could slow such a program 40-fold. After a scan of D ns the
 * next one waits scan_gap * D ns, so scans take at most 1/(1 +
 * gap) of the time; the collections skipped meanwhile are read by the next
 * scan (their marks stay clear for the dead: live_merged counts them).
 * GC_gcollect (GC.collect) is explicit and rare: the collection before
 * it, whose marks it clears, and its own are always read. Tests widen the
 * gap (ALYS_BPF_SCAN_GAP) to make merged collections certain rather than
 * dependent on how fast scans are.
 */
const volatile __u32 scan_gap = 4;

struct tracked {
	__u32 gc_no;			/* GC_gc_no when allocated */
	__u32 pad;
};

/*
 * Blocks being followed (all, or the sampled ones), by address, in three
 * maps. A scan walks every bucket of a hash map whatever it holds (~16 ns
 * a bucket: 1 ms for 64K, 16 ms for the 1M of a full trace's big map), so
 * blocks go to the smallest map with room, and a map is walked, and looked
 * in, only when it holds any: a program that keeps few blocks between
 * collections pays for 16K buckets a scan, one that keeps many for what it
 * keeps.
 */
enum { TIER_SMALL, TIER_MID, TIER_BIG, TIERS };

#define TRACKED_SMALL ALYS_TRACKED_SMALL
#define TRACKED_MID ALYS_TRACKED_MID

/* Preallocated (~1 and ~4 MiB): an element comes from a per-CPU free list.
 * The kernel's allocator for maps that are not (the big one) freed through
 * irq_work when its caches overflowed, and inserts and deletes took ~18% of
 * a deep workload's time. */
/* Values are struct tracked, declared by size: clang leaves a struct
 * seen only through an inner map's definition incomplete in BTF. */
_Static_assert(sizeof(struct tracked) == sizeof(__u64), "struct tracked: 8 bytes");

struct tracked_prealloc_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64);
};

struct tracked_big_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64);
};

/* Each session's three, made by the daemon (TRACKED_SMALL and
 * TRACKED_MID entries, and the big one's size): templates here. */
struct {
	SESSION_MAPS(struct tracked_prealloc_map);
} tracked_small_of SEC(".maps");

struct {
	SESSION_MAPS(struct tracked_prealloc_map);
} tracked_mid_of SEC(".maps");

struct {
	SESSION_MAPS(struct tracked_big_map);
} tracked_big_of SEC(".maps");

/* A session's tracked maps and their counts (alys_sess.tracked_n). */
struct tracked_maps {
	void *m[TIERS];
	__s64 *n;
};

static __always_inline bool tracked_maps(struct alys_sess *S, struct tracked_maps *t)
{
	__u32 slot = S->slot & (ALYS_MAX_SESSIONS - 1);

	t->m[TIER_SMALL] = bpf_map_lookup_elem(&tracked_small_of, &slot);
	t->m[TIER_MID] = bpf_map_lookup_elem(&tracked_mid_of, &slot);
	t->m[TIER_BIG] = bpf_map_lookup_elem(&tracked_big_of, &slot);
	t->n = S->tracked_n;
	return t->m[TIER_SMALL] && t->m[TIER_MID] && t->m[TIER_BIG];
}
/* Filled to 3/4, where a preallocated map's inserts start to fail on a
 * CPU whose free list ran dry. Tests lower both
 * (ALYS_BPF_TRACKED_SMALL_FILL) to reach every map. */
const volatile __s64 tracked_fill[TIER_BIG] = { TRACKED_SMALL / 4 * 3, TRACKED_MID / 4 * 3 };

static __always_inline struct tracked *tracked_lookup(struct tracked_maps *t, __u64 *addr)
{
	struct tracked *v = NULL;

	if (t->n[TIER_SMALL] > 0)
		v = bpf_map_lookup_elem(t->m[TIER_SMALL], addr);
	if (!v && t->n[TIER_MID] > 0)
		v = bpf_map_lookup_elem(t->m[TIER_MID], addr);
	if (!v && t->n[TIER_BIG] > 0)
		v = bpf_map_lookup_elem(t->m[TIER_BIG], addr);
	return v;
}

/* A block not followed yet (no allocator hands out one address twice at
 * once: two CPUs never insert the same one), into a preallocated map with
 * room. */
static __always_inline bool tracked_fast_insert(struct tracked_maps *t, __u64 *addr,
						struct tracked *v)
{
	if (t->n[TIER_SMALL] < tracked_fill[TIER_SMALL] &&
	    !bpf_map_update_elem(t->m[TIER_SMALL], addr, v, BPF_NOEXIST)) {
		__sync_fetch_and_add(&t->n[TIER_SMALL], 1);
		return true;
	}
	if (t->n[TIER_MID] < tracked_fill[TIER_MID] &&
	    !bpf_map_update_elem(t->m[TIER_MID], addr, v, BPF_NOEXIST)) {
		__sync_fetch_and_add(&t->n[TIER_MID], 1);
		return true;
	}
	return false;
}

static __always_inline int tracked_insert(struct tracked_maps *t, __u64 *addr,
					  struct tracked *v)
{
	if (tracked_fast_insert(t, addr, v))
		return 0;
	if (!bpf_map_update_elem(t->m[TIER_BIG], addr, v, BPF_NOEXIST)) {
		__sync_fetch_and_add(&t->n[TIER_BIG], 1);
		return 0;
	}
	return -1;
}

/* Follow addr from now on: the entry updated where it is, or a new one. */
static __always_inline int tracked_set(struct tracked_maps *t, __u64 *addr, struct tracked *v,
				       struct tracked *old)
{
	if (old) {
		*old = *v;
		return 0;
	}
	return tracked_insert(t, addr, v);
}

static __always_inline bool tracked_delete(struct tracked_maps *t, __u64 *addr)
{
	if (t->n[TIER_SMALL] > 0 && !bpf_map_delete_elem(t->m[TIER_SMALL], addr)) {
		__sync_fetch_and_add(&t->n[TIER_SMALL], -1);
		return true;
	}
	if (t->n[TIER_MID] > 0 && !bpf_map_delete_elem(t->m[TIER_MID], addr)) {
		__sync_fetch_and_add(&t->n[TIER_MID], -1);
		return true;
	}
	if (t->n[TIER_BIG] > 0 && !bpf_map_delete_elem(t->m[TIER_BIG], addr)) {
		__sync_fetch_and_add(&t->n[TIER_BIG], -1);
		return true;
	}
	return false;
}

#define HDR_HOPS 6

static __always_inline bool read_u64(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr) == 0;
}

/* HDR(p): 0 when unreadable or not found (layout or address wrong),
 * else the header pointer, which is below 4096 when p starts no block
 * (a forwarding count, or nil). */
static __always_inline int find_header(__u64 arrays, __u64 p, __u64 *hdr)
{
	__u64 hi = p >> (hi_shift & 63), bi, key;

	if (!read_u64(&bi, arrays + top_index_off + (hi & top_mask) * 8))
		return -1;
	for (int i = 0; i < HDR_HOPS; i++) {
		if (!bi || !read_u64(&key, bi + bi_key_off))
			return -1;
		if (key == hi)
			return read_u64(hdr, bi + ((p >> (log_hblk & 63)) & bottom_mask) * 8) ? 0 : -1;
		if (!read_u64(&bi, bi + bi_link_off))
			return -1;
	}
	return -1;
}

/* The header of the hblk holding p: 1 with *hdr set; 0 when its blocks
 * are all dead (free); -1 unreadable. */
static __always_inline int hblk_header(__u64 arrays, __u64 p, __u64 *hdr)
{
	__u8 flags;

	if (find_header(arrays, p, hdr))
		return -1;
	/* Not the start of a block any more: merged into a free one. */
	if (*hdr < (1ULL << (log_hblk & 63)))
		return 0;
	if (bpf_probe_read_user(&flags, 1, (const void *)(*hdr + hb_flags_off)))
		return -1;
	return flags & free_blk ? 0 : 1;
}

/* 1 marked, 0 dead, -1 unreadable. */
static __always_inline int is_marked_uncached(__u64 arrays, __u64 p)
{
	__u64 hdr, off = p & ((1ULL << (log_hblk & 63)) - 1);
	int state = hblk_header(arrays, p, &hdr);
	__u8 mark;

	if (state <= 0)
		return state;
	if (bpf_probe_read_user(&mark, 1, (const void *)(hdr + hb_marks_off +
							 (off >> (granule_shift & 63)))))
		return -1;
	return mark != 0;
}

/*
 * A scan judges thousands of blocks, most of them packed into a few
 * collector blocks (hblks): each hblk's header and mark bytes are read
 * once a scan (~100 ns for all of them) instead of five reads a block
 * (~300 ns). Per CPU, direct mapped, and tagged with the scan (a number
 * no other scan has, even one that preempts it on this CPU), so nothing
 * from another scan is used. Mark bytes are one a granule, as the
 * collector's own code reads them (src/gc/gc_layout.c).
 */
#define HBLK_CACHE_MAX 16384	/* slots; the loader sizes the map (a power of 2) */
#define HBLK_MARKS_MAX 256	/* 4 KiB hblks of 16-byte granules */

/* The map's slots - 1: as many as the loader's memory budget allows per
 * CPU, up to one for each 4 KiB block of a 64 MiB heap (src/core/session.c) */
const volatile __u32 hblk_cache_mask = 511;

struct hblk_marks {
	__u64 hblk;		/* p >> log_hblk */
	__u64 scan;		/* the scan that filled it (scan_seq) */
	__s32 state;		/* 1: marks read; 0: free, all dead; -1 unreadable */
	__u32 pad;
	__u8 marks[HBLK_MARKS_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 512);
	__type(key, __u32);
	__type(value, struct hblk_marks);
} hblk_cache SEC(".maps");

static __always_inline int hblk_fill(struct hblk_marks *e, __u64 arrays, __u64 p)
{
	__u64 hdr;
	int state = hblk_header(arrays, p, &hdr);

	if (state <= 0)
		return state;
	if (bpf_probe_read_user(e->marks, HBLK_MARKS_MAX, (const void *)(hdr + hb_marks_off)))
		return -1;
	return 1;
}

static __u64 scan_seq;

static __always_inline int is_marked(__u64 arrays, __u64 p, __u64 scan)
{
	__u64 hblk = p >> (log_hblk & 63), off = p & ((1ULL << (log_hblk & 63)) - 1);
	__u64 g = off >> (granule_shift & 63);
	__u32 slot = (__u32)hblk & hblk_cache_mask & (HBLK_CACHE_MAX - 1);
	struct hblk_marks *e;

	/* a hblk with more granules than the cache holds: read directly */
	if ((1ULL << (log_hblk & 63)) >> (granule_shift & 63) > HBLK_MARKS_MAX)
		return is_marked_uncached(arrays, p);
	e = bpf_map_lookup_elem(&hblk_cache, &slot);
	if (!e)
		return is_marked_uncached(arrays, p);
	if (e->hblk != hblk || e->scan != scan) {
		e->state = hblk_fill(e, arrays, p);
		e->hblk = hblk;
		e->scan = scan;
	}
	if (e->state <= 0)
		return e->state;
	return e->marks[g & (HBLK_MARKS_MAX - 1)] != 0;
}

/* The header of a block just returned for size bytes must look like one. */
static __always_inline bool header_checks_out(__u64 arrays, __u64 p, __u64 size)
{
	__u64 hdr, sz, off = p & ((1ULL << (log_hblk & 63)) - 1);
	__u8 flags;

	if (find_header(arrays, p, &hdr) || hdr < (1ULL << (log_hblk & 63)))
		return false;
	if (!read_u64(&sz, hdr + hb_sz_off) ||
	    bpf_probe_read_user(&flags, 1, (const void *)(hdr + hb_flags_off)))
		return false;
	if (flags & free_blk)
		return false;
	if (sz < size || (sz & ((1ULL << (granule_shift & 63)) - 1)))
		return false;
	/* A large object's block is the request rounded up to granules (plus
	 * one byte with interior pointers). A small one gets a size class,
	 * which may be far bigger (a 1400-byte request lands in the 2048-byte
	 * class: two per block), and sits at a multiple of it in its block. */
	if (size > (1ULL << (log_hblk & 63)) / 2)
		return sz <= size + 64 && off == 0;
	return sz <= (1ULL << (log_hblk & 63)) / 2 && off % sz == 0;
}

static __always_inline bool emit_death(__u32 slot, __u64 addr, __u8 cause, __u32 gc_no,
				       __u32 since)
{
	void *rb = events_at(slot);
	struct alys_rb_death *d;

	if (!rb)
		return false;
	d = bpf_ringbuf_reserve(rb, sizeof(*d), 0);
	if (!d) {
		count(slot, ALYS_CNT_RB_DROP_DEATH);
		return false;
	}
	d->type = ALYS_RB_DEATH;
	d->cause = cause;
	d->pad = 0;
	d->gc_no = gc_no;
	d->since = since;
	d->pad2 = 0;
	d->addr = addr;
	d->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(d, BPF_RB_NO_WAKEUP);
	return true;
}

struct scan_ctx {
	__u64 arrays;
	__u64 scan;			/* scan_seq's number for this scan */
	__u32 cur, since;
	__u32 tier;			/* the map being walked */
	__u32 slot;			/* the session's */
	__u64 followed, judged, dead, unreadable;
};

static long scan_one(struct bpf_map *map, __u64 *key, struct tracked *v, struct scan_ctx *c)
{
	__u64 addr = *key;
	int m;

	c->followed++;
	if (v->gc_no >= c->cur)	/* allocated after the collection */
		return 0;
	c->judged++;
	m = is_marked(c->arrays, addr, c->scan);
	if (m < 0) {
		c->unreadable++;
		count(c->slot, ALYS_CNT_LIVE_UNREADABLE);
		return 0;
	}
	if (m)
		return 0;
	/* Unreported deaths stay tracked: a later scan finds them again. */
	if (!emit_death(c->slot, addr, ALYS_CAUSE_MARKS, c->cur,
			v->gc_no + 1 > c->since ? v->gc_no + 1 : c->since))
		return 0;
	if (!bpf_map_delete_elem(map, &addr)) {
		struct alys_sess *S = sess_at(c->slot);

		if (S)
			__sync_fetch_and_add(&S->tracked_n[c->tier & (TIERS - 1)], -1);
	}
	c->dead++;
	return 0;
}

/* The collector's count of collections (GC_gc_no), 0 when unknown: read
 * once a probe, and passed along (a user read costs ~60 ns). */
static __always_inline __u32 read_gc_no(__u64 bias)
{
	__u64 v = 0;

	if (gc_no_vaddr)
		read_u64(&v, bias + gc_no_vaddr);
	return (__u32)v;
}

/* Whether collections are read at all (liveness by mark bytes, verified). */
static __always_inline bool scanning(struct alys_sess *S)
{
	return live_mode == ALYS_LIVE_MARKS && S->live_state == ALYS_LIVE_VERIFIED && gc_no_vaddr;
}

/* Judge the tracked blocks if a collection ran since the last scan; cur is
 * read_gc_no(bias). bias: runtime address minus ELF address of the object
 * holding libgc. */
static __always_inline void scan_if_collected(struct alys_sess *S, __u64 bias,
					      enum scan_why why, __u64 cur)
{
	struct alys_rb_collection *r;
	struct scan_ctx c = { .arrays = bias + arrays_vaddr, .slot = S->slot };
	struct tracked_maps t;
	__u64 last, t0, t1;
	void *rb;

	if (!scanning(S) || !tracked_maps(S, &t))
		return;
	if (S->live_end_request &&
	    __sync_val_compare_and_swap(&S->live_end_request, 1, 0) == 1)
		why = SCAN_END;
	if (S->live_bias != bias)
		S->live_bias = bias;
	cur = (__u32)cur;
	last = S->live_scanned_gc;
	if (!cur || (cur == last && why != SCAN_END))
		return;
	t0 = bpf_ktime_get_ns();
	if (why == SCAN_IMPLICIT && t0 < S->live_next_scan_ns &&
	    !(last < S->live_explicit_gc && S->live_explicit_gc <= cur))
		return;
	/* One CPU scans each collection. */
	if (__sync_val_compare_and_swap(&S->live_scanned_gc, last, cur) != last)
		return;
	if (cur > last + 1)
		count_n(S->slot, ALYS_CNT_LIVE_MERGED, cur - last - 1);
	c.cur = (__u32)cur;
	c.scan = __sync_fetch_and_add(&scan_seq, 1) + 1;
	c.since = cur > last ? (__u32)last + 1 : (__u32)cur;
	if (t.n[TIER_SMALL] > 0)
		bpf_for_each_map_elem(t.m[TIER_SMALL], scan_one, &c, 0);
	if (t.n[TIER_MID] > 0) {
		c.tier = TIER_MID;
		bpf_for_each_map_elem(t.m[TIER_MID], scan_one, &c, 0);
	}
	if (t.n[TIER_BIG] > 0) {
		c.tier = TIER_BIG;
		bpf_for_each_map_elem(t.m[TIER_BIG], scan_one, &c, 0);
	}
	S->live_scans++;
	t1 = bpf_ktime_get_ns();
	S->live_next_scan_ns = t1 + (t1 - t0) * scan_gap;
	rb = events_at(S->slot);
	if (!rb)
		return;
	r = bpf_ringbuf_reserve(rb, sizeof(*r), 0);
	if (!r)
		return;
	r->type = ALYS_RB_COLLECTION;
	r->at_end = why == SCAN_END;
	r->pad[0] = r->pad[1] = 0;
	r->gc_no = c.cur;
	r->since = c.since;
	r->pad2 = 0;
	r->ts_ns = t1;
	r->scan_ns = t1 - t0;
	r->followed = c.followed;
	r->judged = c.judged;
	r->dead = c.dead;
	r->unreadable = c.unreadable;
	bpf_ringbuf_submit(r, why == SCAN_END ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* scan_if_collected, reading GC_gc_no only when collections are read. */
static __always_inline void maybe_scan(struct alys_sess *S, __u64 bias, enum scan_why why)
{
	if (scanning(S))
		scan_if_collected(S, bias, why, read_gc_no(bias));
}

/* At an allocation's return (gc_no: read_gc_no): check the layout on the
 * first blocks, then follow the new block. A block still tracked at this address died
 * unnoticed (reuse mode, or an unreadable header): report it now. */
static __always_inline void track_block(struct alys_sess *S, __u64 bias, __u64 addr,
					__u64 size, bool check, __u32 gc_no)
{
	struct tracked v = { 0 }, *old;
	struct tracked_maps t;

	if (!addr || !tracked_maps(S, &t))
		return;
	v.gc_no = gc_no;
	if (live_mode == ALYS_LIVE_OFF) {
		/* Sampled: the frees of sampled blocks are still recorded. */
		if (sampled_trace && tracked_set(&t, &addr, &v, tracked_lookup(&t, &addr)))
			count(S->slot, ALYS_CNT_TRACKED_FULL);
		return;
	}
	if (live_mode == ALYS_LIVE_MARKS && check && size &&
	    S->live_state == ALYS_LIVE_VERIFYING) {
		if (!header_checks_out(bias + arrays_vaddr, addr, size) ||
		    S->live_mismatched < live_test_fail_first) {
			if (__sync_fetch_and_add(&S->live_mismatched, 1) + 1 >= ALYS_LIVE_FAIL_N)
				__sync_val_compare_and_swap(&S->live_state, ALYS_LIVE_VERIFYING,
							    ALYS_LIVE_FAILED);
		} else if (__sync_fetch_and_add(&S->live_verified, 1) + 1 >= ALYS_LIVE_VERIFY_N)
			__sync_val_compare_and_swap(&S->live_state, ALYS_LIVE_VERIFYING,
						    ALYS_LIVE_VERIFIED);
	}
	/* The common case, a block not followed yet: one insert that fails
	 * if it is, not a lookup first (with the other maps empty, the small
	 * one is the only place it could be). */
	if (!t.n[TIER_MID] && !t.n[TIER_BIG] &&
	    t.n[TIER_SMALL] < tracked_fill[TIER_SMALL] &&
	    !bpf_map_update_elem(t.m[TIER_SMALL], &addr, &v, BPF_NOEXIST)) {
		__sync_fetch_and_add(&t.n[TIER_SMALL], 1);
		return;
	}
	old = tracked_lookup(&t, &addr);
	if (old) {
		if (live_mode == ALYS_LIVE_MARKS && S->live_state == ALYS_LIVE_VERIFIED)
			count(S->slot, ALYS_CNT_LIVE_REUSED);
		/* Handed out again with no collection between: freed by a
		 * GC_free no probe saw (--sample refill probes none). */
		emit_death(S->slot, addr, ALYS_CAUSE_REUSE, v.gc_no,
			   old->gc_no < v.gc_no ? old->gc_no + 1 : v.gc_no);
	}
	if (tracked_set(&t, &addr, &v, old))
		count(S->slot, ALYS_CNT_TRACKED_FULL);
}

/* Whether addr was tracked (and is no more): GC_free, realloc's old block. */
static __always_inline bool untrack_block(struct alys_sess *S, __u64 addr)
{
	struct tracked_maps t;

	return addr && tracked_maps(S, &t) && tracked_delete(&t, &addr);
}

#endif
