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
 * whose mark byte is clear; the daemon keeps those allocated before that
 * collection.
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
 * A scan costs ~1 ms per 64K buckets of the tracked maps whatever they
 * hold, plus ~0.5 us per collector block holding followed blocks, and a
 * small heap collects every few hundred KiB: scanning after each
 * collection could slow such a program many-fold. After a scan of D ns the
 * next one waits scan_gap * D ns, so scans take at most 1/(1 +
 * gap) of the time; the collections skipped meanwhile are read by the next
 * scan (their marks stay clear for the dead: live_merged counts them).
 * GC_gcollect (GC.collect) is explicit and rare: the collection before
 * it, whose marks it clears, and its own are always read. Tests widen the
 * gap (ALYS_BPF_SCAN_GAP) to make merged collections certain rather than
 * dependent on how fast scans are.
 */
const volatile __u32 scan_gap = 4;

/*
 * The blocks followed (all, or the sampled ones) as one bit per 16-byte
 * granule of the 4 KiB collector block (hblk) holding them: a scan reads
 * each hblk's header and mark bytes once and judges its 256 granules in a
 * few word operations, so its cost follows the heap's hblks, not the
 * blocks in them (1.07M blocks in 15K hblks: 120 ms a scan with an entry
 * a block). The granule and hblk sizes are
 * x86-64's, whatever the collector's layout says; liveness by marks needs
 * them to be the collector's (src/gc/liveness_setup.c).
 *
 * alloc_gc is the highest GC_gc_no an allocation into the hblk saw. A
 * block allocated after collection N is unmarked when N's marks are read:
 * where alloc_gc >= N, the scan cannot tell such a block from the dead and
 * keeps the bits it finds clear (ambiguous). Every death found goes to
 * the daemon, which reports it only for a block it holds, allocated
 * before that collection (src/core/session.c), and so drops what an
 * ambiguous hblk or a bit kept for a later scan finds again.
 *
 * Entries are never deleted (a value may be in use on another CPU), so
 * the maps hold the hblks the heap ever used, and a block's hblk is in
 * the first map with room when first seen.
 */
#define TRACK_HBLK_SHIFT ALYS_TRACK_HBLK_SHIFT
#define TRACK_GRANULE_SHIFT ALYS_TRACK_GRANULE_SHIFT
#define TRACK_WORDS 4		/* 256 granules of 16 bytes */

struct tracked_hblk {
	__u64 bits[TRACK_WORDS];
	__u32 alloc_gc;
	__u32 pad;
};

/* Three maps: a scan walks every bucket of a hash map whatever it holds
 * (~16 ns a bucket), so hblks go to the smallest map with room, and a map
 * is walked, and looked in, only when it holds any: a small heap pays for
 * 4K buckets a scan, a big one for what it uses. */
enum { TIER_SMALL, TIER_MID, TIER_BIG, TIERS };

/* Values are struct tracked_hblk, declared by size: clang leaves a struct
 * seen only through an inner map's definition incomplete in BTF. Not
 * preallocated: an entry is made once an hblk, and memory follows the
 * heap. */
struct tracked_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64[5]);
};
_Static_assert(sizeof(struct tracked_hblk) == 5 * sizeof(__u64), "struct tracked_hblk: 40 bytes");

/* Each session's three, made by the daemon (ALYS_TRACKED_SMALL and
 * ALYS_TRACKED_MID entries, and the big one's size): templates here. */
struct {
	SESSION_MAPS(struct tracked_map);
} tracked_small_of SEC(".maps");

struct {
	SESSION_MAPS(struct tracked_map);
} tracked_mid_of SEC(".maps");

struct {
	SESSION_MAPS(struct tracked_map);
} tracked_big_of SEC(".maps");

/* A session's tracked maps and their entry counts (alys_sess.tracked_n). */
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

/* The small and mid maps' sizes, which they are filled to before the next
 * takes hblks. Tests lower both (ALYS_BPF_TRACKED_SMALL_FILL) to reach
 * every map. */
const volatile __s64 tracked_fill[TIER_BIG] = { ALYS_TRACKED_SMALL, ALYS_TRACKED_MID };

/* The biggest map first: an hblk is most likely where most are (a miss
 * costs ~40 ns). */
static __always_inline struct tracked_hblk *hblk_lookup(struct tracked_maps *t, __u64 *key)
{
	struct tracked_hblk *e = NULL;

	if (t->n[TIER_BIG] > 0)
		e = bpf_map_lookup_elem(t->m[TIER_BIG], key);
	if (!e && t->n[TIER_MID] > 0)
		e = bpf_map_lookup_elem(t->m[TIER_MID], key);
	if (!e && t->n[TIER_SMALL] > 0)
		e = bpf_map_lookup_elem(t->m[TIER_SMALL], key);
	return e;
}

/* key's entry in map tier, made if need be (and another CPU's if it made
 * it first); NULL when the map is full. */
static __always_inline struct tracked_hblk *hblk_make(struct tracked_maps *t, int tier,
						       __u64 *key)
{
	struct tracked_hblk zero = { 0 };
	void *m = t->m[tier & 3];
	long err;

	if (tier < TIER_BIG && t->n[tier & 3] >= tracked_fill[tier & 1])
		return NULL;
	err = bpf_map_update_elem(m, key, &zero, BPF_NOEXIST);
	if (!err)
		__sync_fetch_and_add(&t->n[tier & 3], 1);
	else if (err != -17)	/* EEXIST */
		return NULL;
	return bpf_map_lookup_elem(m, key);
}

static __always_inline struct tracked_hblk *hblk_get(struct tracked_maps *t, __u64 *key)
{
	struct tracked_hblk *e = hblk_lookup(t, key);

	if (!e)
		e = hblk_make(t, TIER_SMALL, key);
	if (!e)
		e = hblk_make(t, TIER_MID, key);
	if (!e)
		e = hblk_make(t, TIER_BIG, key);
	return e;
}

static __always_inline __u64 granule_bit(__u64 addr)
{
	return 1ULL << ((addr >> TRACK_GRANULE_SHIFT) & 63);
}

static __always_inline __u32 granule_word(__u64 addr)
{
	return (addr >> (TRACK_GRANULE_SHIFT + 6)) & (TRACK_WORDS - 1);
}

/* Follow addr, allocated at collection gc_no: 1 when it was followed
 * already (its block died unseen), 0 when not, -1 when no map has room. */
static __always_inline int tracked_add(struct tracked_maps *t, __u64 addr, __u32 gc_no)
{
	__u64 key = addr >> TRACK_HBLK_SHIFT, bit = granule_bit(addr), old;
	struct tracked_hblk *e = hblk_get(t, &key);

	if (!e)
		return -1;
	/* alloc_gc before the bit (the scan reads them the other way round):
	 * a scan that sees the bit sees the stamp. Raised only: a thread's
	 * older stamp must not lower another's. */
	for (int i = 0; i < 3; i++) {
		__u32 cur = *(volatile __u32 *)&e->alloc_gc;

		if (cur >= gc_no || __sync_val_compare_and_swap(&e->alloc_gc, cur, gc_no) == cur)
			break;
	}
	old = __sync_fetch_and_or(&e->bits[granule_word(addr)], bit);
	return (old & bit) != 0;
}

/* Whether addr was followed (and is no more). */
static __always_inline bool tracked_delete(struct tracked_maps *t, __u64 addr)
{
	__u64 key = addr >> TRACK_HBLK_SHIFT, bit = granule_bit(addr), old;
	struct tracked_hblk *e = hblk_lookup(t, &key);

	if (!e)
		return false;
	old = __sync_fetch_and_and(&e->bits[granule_word(addr)], ~bit);
	return (old & bit) != 0;
}

#define HDR_HOPS 6

static __always_inline bool read_u64(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr) == 0;
}

/* HDR(p): 0 when unreadable or not found (layout or address wrong),
 * else the header pointer, which is below 4096 when p starts no block
 * (a forwarding count, or nil). */
static __always_inline int find_bottom(__u64 arrays, __u64 hi, __u64 *bottom)
{
	__u64 bi, key;

	if (!read_u64(&bi, arrays + top_index_off + (hi & top_mask) * 8))
		return -1;
	for (int i = 0; i < HDR_HOPS; i++) {
		if (!bi || !read_u64(&key, bi + bi_key_off))
			return -1;
		if (key == hi) {
			*bottom = bi;
			return 0;
		}
		if (!read_u64(&bi, bi + bi_link_off))
			return -1;
	}
	return -1;
}

static __always_inline int find_header(__u64 arrays, __u64 p, __u64 *hdr)
{
	__u64 bi;

	if (find_bottom(arrays, p >> (hi_shift & 63), &bi))
		return -1;
	return read_u64(hdr, bi + ((p >> (log_hblk & 63)) & bottom_mask) * 8) ? 0 : -1;
}

/* The hblk being judged: its mark bytes, one a granule (as the
 * collector's own code reads them: src/gc/gc_layout.c), and its bits (off
 * the stack, which the walk's callers fill). */
#define MARKS_N (1 << (TRACK_HBLK_SHIFT - TRACK_GRANULE_SHIFT))
#define FLAGS_GAP_MAX ALYS_FLAGS_GAP_MAX
#define BOTTOMS 64

struct hblk_marks {
	/* hb_flags .. hb_marks[] read at once, so that the marks start
	 * at raw[FLAGS_GAP_MAX] */
	__u8 raw[FLAGS_GAP_MAX + MARKS_N];
	__u64 bits[TRACK_WORDS], dead[TRACK_WORDS];
	/* The bottom indices a scan found (4 MiB of heap each), by their
	 * key's low bits: the hblks come in hash order, so most of the
	 * header's reads are of a handful of them. Tagged with the scan
	 * (no two scans share a number). */
	__u64 bottom_key[BOTTOMS], bottom[BOTTOMS], bottom_scan[BOTTOMS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hblk_marks);
} hblk_marks SEC(".maps");

/* The granules of word w (64 of them) whose mark byte is clear, as bits. */
static __always_inline __u64 unmarked_word(const struct hblk_marks *mk, __u32 w)
{
	const __u64 low7 = 0x7f7f7f7f7f7f7f7fULL;
	__u64 r = 0;

	/* a loop: unrolled, clang spilled it past the 512-byte stack */
#pragma clang loop unroll(disable) vectorize(disable)
	for (__u32 j = 0; j < 8; j++) {
		__u64 x = *(const __u64 *)&mk->raw[FLAGS_GAP_MAX +
						   ((w & (TRACK_WORDS - 1)) * 8 + j) * 8];
		/* 0x80 in each byte that is zero, then those 8 bits packed */
		__u64 z = ~(((x & low7) + low7) | x | low7);

		r |= (((z >> 7) * 0x0102040810204080ULL) >> 56) << (j * 8);
	}
	return r;
}

/* The index of v's lowest set bit (v != 0). */
static const __u8 debruijn64[64] = {
	0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4,
	62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
	46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6,
};

static __always_inline __u32 lowest_bit(__u64 v)
{
	return debruijn64[(((v & -v) * 0x03f79d71b4cb0a89ULL) >> 58) & 63];
}

static __always_inline __u32 popcount64(__u64 v)
{
	v = v - ((v >> 1) & 0x5555555555555555ULL);
	v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (v * 0x0101010101010101ULL) >> 56;
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
	__u64 scan;			/* scan_seq's number for this one */
	__u32 cur, since;
	__u32 slot;			/* the session's */
	__u32 pad;
	__u64 followed, judged, dead, unreadable;
};

static __u64 scan_seq;

/* The marks of the hblk at base into mk: 1 read, 0 its blocks are all
 * dead (free), -1 unreadable. Two reads an hblk where its bottom index
 * was found already. */
static __always_inline int hblk_read_marks(struct hblk_marks *mk, struct scan_ctx *c,
					   __u64 base)
{
	__u64 hi = base >> (hi_shift & 63), hdr, bi;
	__u32 slot = hi & (BOTTOMS - 1), gap = (hb_marks_off - hb_flags_off) & (FLAGS_GAP_MAX - 1);

	if (mk->bottom_scan[slot] == c->scan && mk->bottom_key[slot] == hi) {
		bi = mk->bottom[slot];
	} else {
		if (find_bottom(c->arrays, hi, &bi))
			return -1;
		mk->bottom_scan[slot] = c->scan;
		mk->bottom_key[slot] = hi;
		mk->bottom[slot] = bi;
	}
	if (!read_u64(&hdr, bi + ((base >> (log_hblk & 63)) & bottom_mask) * 8))
		return -1;
	/* Not the start of a block any more: merged into a free one. */
	if (hdr < (1ULL << (log_hblk & 63)))
		return 0;
	if (bpf_probe_read_user(&mk->raw[FLAGS_GAP_MAX - gap], gap + MARKS_N,
				(const void *)(hdr + hb_marks_off - gap)))
		return -1;
	return mk->raw[(FLAGS_GAP_MAX - gap) & (FLAGS_GAP_MAX - 1)] & free_blk ? 0 : 1;
}

/* The dead of one word of an hblk's bits, reported one a bpf_loop step
 * (a loop the verifier would walk through 64 times). */
struct dead_word {
	struct scan_ctx *c;
	__u64 *bits;		/* the word in the map */
	__u64 base;		/* its first granule's address */
	__u64 dead;
	bool keep;		/* bits not taken off (ambiguous) */
};

/* One whose record could not be had is followed again, if its bit was
 * taken off. */
static long emit_dead_one(__u64 i, struct dead_word *d)
{
	__u64 low = d->dead & -d->dead;
	struct scan_ctx *c = d->c;

	if (!low)
		return 1;
	d->dead &= d->dead - 1;
	if (emit_death(c->slot, d->base + ((__u64)lowest_bit(low) << TRACK_GRANULE_SHIFT),
		       ALYS_CAUSE_MARKS, c->cur, c->since))
		c->dead++;
	else if (!d->keep)
		__sync_fetch_and_or(d->bits, low);
	return 0;
}

static long scan_hblk(struct bpf_map *map, __u64 *key, struct tracked_hblk *e,
		      struct scan_ctx *c)
{
	__u64 base = *key << TRACK_HBLK_SHIFT, *bits, *dead;
	__u32 n = 0, zero = 0;
	struct hblk_marks *mk = bpf_map_lookup_elem(&hblk_marks, &zero);
	struct dead_word d = { .c = c };
	bool ambiguous;
	int state;

	if (!mk)
		return 1;
	bits = mk->bits;
	dead = mk->dead;
	for (int w = 0; w < TRACK_WORDS; w++) {
		bits[w] = *(volatile __u64 *)&e->bits[w];
		n += popcount64(bits[w]);
	}
	if (!n)
		return 0;
	/* bits, then the stamp: tracked_add writes them the other way round */
	asm volatile("" ::: "memory");
	ambiguous = *(volatile __u32 *)&e->alloc_gc >= c->cur;
	c->followed += n;
	if (!ambiguous)
		c->judged += n;
	state = hblk_read_marks(mk, c, base);
	if (state < 0) {
		/* judged again at the next collection */
		c->unreadable += n;
		count_n(c->slot, ALYS_CNT_LIVE_UNREADABLE, n);
		return 0;
	}
	for (int w = 0; w < TRACK_WORDS; w++)
		dead[w] = state ? bits[w] & unmarked_word(mk, w) : bits[w];
	if (!ambiguous) {
		/* Taken off, unless an allocation into the hblk since the
		 * collection (it may have reused a dead block's address)
		 * raced the scan: then put back, as for an ambiguous hblk. */
		for (int w = 0; w < TRACK_WORDS; w++)
			if (dead[w])
				__sync_fetch_and_and(&e->bits[w], ~dead[w]);
		asm volatile("" ::: "memory");
		if (*(volatile __u32 *)&e->alloc_gc >= c->cur) {
			ambiguous = true;
			for (int w = 0; w < TRACK_WORDS; w++)
				if (dead[w])
					__sync_fetch_and_or(&e->bits[w], dead[w]);
		}
	}
	d.keep = ambiguous;
	for (int w = 0; w < TRACK_WORDS; w++) {
		d.bits = &e->bits[w];
		d.dead = dead[w];
		d.base = base + ((__u64)w << (TRACK_GRANULE_SHIFT + 6));
		if (d.dead)
			bpf_loop(64, emit_dead_one, &d, 0);
	}
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

/*
 * GC_gc_no now, at a probe of an allocation or a free: read from the
 * target once a collection, not once a call (a user read of a cold page
 * costs ~200 ns, a tenth of a traced allocation). bdwgc changes it only in
 * GC_stopped_mark, between GC_stop_world and GC_start_world, and no thread
 * runs a probe's program between the change and the restart: the others
 * are stopped, and one inside a program when the stop came answers the
 * signal only once the program is done. So the pause probes count the
 * stops and starts (gc_world_gen), and a value read while the world ran
 * holds as long as the count is the one it was read at. Until the probes
 * have bracketed one collection (attached while one ran, or not at all:
 * gc_no_known 0), once the daemon detaches them (2), and while the world
 * is stopped, each call reads it.
 */
static __always_inline __u32 gc_no_at(struct alys_sess *S, __u64 bias)
{
	__u32 gen = *(volatile __u32 *)&S->gc_world_gen, v;
	__u64 cached = *(volatile __u64 *)&S->gc_no_cache;
	bool running = !*(volatile __u32 *)&S->gc_world_stopped;

	if (!gc_no_vaddr)
		return 0;
	if (running && S->gc_no_known == 1 && (__u32)(cached >> 32) == gen)
		return (__u32)cached;
	v = read_gc_no(bias);
	count(S->slot, ALYS_CNT_GC_NO_READS);
	/* tagged with the count it was read at: a stop since makes it stale */
	if (running)
		S->gc_no_cache = (__u64)gen << 32 | v;
	return v;
}

/* Whether collections are read at all (liveness by mark bytes, verified). */
static __always_inline bool scanning(struct alys_sess *S)
{
	return live_mode == ALYS_LIVE_MARKS && S->live_state == ALYS_LIVE_VERIFIED && gc_no_vaddr;
}

/* Judge the tracked blocks if a collection ran since the last scan; cur is
 * gc_no_at(S, bias). bias: runtime address minus ELF address of the object
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
		bpf_for_each_map_elem(t.m[TIER_SMALL], scan_hblk, &c, 0);
	if (t.n[TIER_MID] > 0)
		bpf_for_each_map_elem(t.m[TIER_MID], scan_hblk, &c, 0);
	if (t.n[TIER_BIG] > 0)
		bpf_for_each_map_elem(t.m[TIER_BIG], scan_hblk, &c, 0);
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
		scan_if_collected(S, bias, why, gc_no_at(S, bias));
}

/* At an allocation's return (gc_no: gc_no_at): check the layout on the
 * first blocks, then follow the new block. A block still followed at this
 * address died unnoticed (reuse mode, or an unreadable header): report it
 * now (the daemon dates it from its allocation). */
static __always_inline void track_block(struct alys_sess *S, __u64 bias, __u64 addr,
					__u64 size, bool check, __u32 gc_no)
{
	struct tracked_maps t;
	int was;

	if (!addr || !tracked_maps(S, &t))
		return;
	if (live_mode == ALYS_LIVE_OFF) {
		/* Sampled: the frees of sampled blocks are still recorded. */
		if (sampled_trace && tracked_add(&t, addr, gc_no) < 0)
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
	was = tracked_add(&t, addr, gc_no);
	if (was < 0) {
		count(S->slot, ALYS_CNT_TRACKED_FULL);
		return;
	}
	if (!was)
		return;
	/* Handed out again with no collection between: freed by a GC_free no
	 * probe saw (--sample refill probes none), or its death not read (the
	 * daemon counts live_reused of those it keeps). */
	emit_death(S->slot, addr, ALYS_CAUSE_REUSE, gc_no, 0);
}

/* Whether addr was tracked (and is no more): GC_free, realloc's old block. */
static __always_inline bool untrack_block(struct alys_sess *S, __u64 addr)
{
	struct tracked_maps t;

	return addr && tracked_maps(S, &t) && tracked_delete(&t, addr);
}

#endif
