/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack walk from .eh_frame-derived tables (--unwind=dwarf), for code without
 * frame pointers such as Crystal's.
 *
 * Per frame: find the mapping of the pc, binary-search the object's rows for
 * the last row at or below (pc - bias), compute the CFA from rsp or rbp,
 * read the return address at CFA-8, restore rbp if the row says where it
 * was saved, and continue with sp = CFA. The first frame uses the probe's pc
 * itself; later ones pc-1, because a return address points past the call.
 *
 * Mappings are found here, not by userspace: a process maps its libraries
 * and allocates long before a daemon could react. bpf_find_vma gives the
 * mapped file's inode, which names the object's rows loaded in advance.
 */
#ifndef ALYS_UNWIND_DWARF_H
#define ALYS_UNWIND_DWARF_H

#include "alys_unwind.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* sized by the loader */
	__uint(map_flags, BPF_F_MMAPABLE);	/* filled by memcpy */
	__type(key, __u32);
	__type(value, struct alys_unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct alys_object_key);
	__type(value, struct alys_object);
} unwind_objects SEC(".maps");

/* Keyed by the address space (mm), not the pid: an exec gets a new mm and so
 * a fresh cache, never the old image's mappings. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct alys_proc);
} unwind_procs SEC(".maps");

struct vma_info {
	__u64 start, end, pgoff;
	__u64 ino;
	__u32 dev;
	__u32 found;
};

static long vma_found(struct task_struct *task, struct vm_area_struct *vma,
		      struct vma_info *vi)
{
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (!f)
		return 0;
	vi->start = BPF_CORE_READ(vma, vm_start);
	vi->end = BPF_CORE_READ(vma, vm_end);
	vi->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	vi->ino = BPF_CORE_READ(f, f_inode, i_ino);
	vi->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	vi->found = 1;
	return 0;
}

static __always_inline struct alys_proc_mapping *
cached_mapping(struct alys_proc *p, __u64 pc)
{
	for (__u32 i = 0; i < ALYS_PROC_MAPPINGS; i++) {
		struct alys_proc_mapping *m;

		if (i >= p->n)
			break;
		m = &p->m[i];
		if (pc >= m->start && pc < m->end)
			return m;
	}
	return NULL;
}

static __always_inline bool discover_mapping(struct alys_proc *p, __u64 pc,
					     struct alys_proc_mapping *out)
{
	struct vma_info vi = {};
	struct alys_object_key key = {};
	struct alys_object *obj;
	__u32 slot;

	if (bpf_find_vma(bpf_get_current_task_btf(), pc, vma_found, &vi, 0) ||
	    !vi.found)
		return false;
	key.ino = vi.ino;
	key.dev = vi.dev;
	obj = bpf_map_lookup_elem(&unwind_objects, &key);
	if (!obj)
		return false;
	out->start = vi.start;
	out->end = vi.end;
	out->bias = vi.start - (vi.pgoff << 12) - obj->vaddr_minus_offset;
	out->row_first = obj->row_first;
	out->row_count = obj->row_count;
	/* Racing CPUs may both append the same mapping: harmless. */
	slot = __sync_fetch_and_add(&p->n, 1);
	if (slot < ALYS_PROC_MAPPINGS)
		p->m[slot] = *out;
	return true;
}

/* The last row whose pc <= rel, or NULL. */
static __always_inline struct alys_unwind_row *find_row(__u32 first, __u32 count,
							 __u32 rel)
{
	__u32 lo = 0, hi = count, idx;

	for (int i = 0; i < 26; i++) {
		struct alys_unwind_row *row;
		__u32 mid;

		if (lo >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		idx = first + mid;
		row = bpf_map_lookup_elem(&unwind_rows, &idx);
		if (!row)
			return NULL;
		if (row->pc <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	idx = first + lo - 1;
	return bpf_map_lookup_elem(&unwind_rows, &idx);
}

/*
 * The rows found last, by return address: a deep stack repeats a few
 * functions' call sites, and each binary search over a big program's rows
 * costs ~20 cache misses (~100 ns a frame). Per CPU, so no other CPU
 * writes an entry being read; the tag mixes the process entry's epoch,
 * the pc and the row itself, so that an entry half written by a program
 * that preempted this one, or left by another process, does not match.
 */
#define UNWIND_MEMO_SLOTS 8192

struct memo_entry {
	__u64 tag;
	__u64 row;		/* struct alys_unwind_row without its pc */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNWIND_MEMO_SLOTS);
	__type(key, __u32);
	__type(value, struct memo_entry);
} unwind_memo SEC(".maps");

/* Two multiplies, not the ten of two stack-key mixes: it runs every frame.
 * Each product is a bijection of its input, so (epoch, pc) pairs part
 * unless the xor of two pseudo-random values cancels (odds ~2^-64), and a
 * torn entry (a new row under an old tag) matches only if the rows' xor
 * equals that of two such values. */
static __always_inline __u64 memo_tag(__u32 epoch, __u64 pc, __u64 row)
{
	return (pc * 0x9e3779b97f4a7c15ULL) ^ (((__u64)epoch << 1 | 1) * 0xc4ceb9fe1a85ec53ULL) ^
	       row;
}

static __always_inline __u64 row_pack(const struct alys_unwind_row *r)
{
	return (__u64)(__u32)r->cfa_offset | (__u64)(__u16)r->rbp_offset << 32 |
	       (__u64)r->cfa_type << 48 | (__u64)r->rbp_type << 56;
}

static __always_inline void row_unpack(__u64 v, struct alys_unwind_row *r)
{
	r->cfa_offset = (__s32)(__u32)v;
	r->rbp_offset = (__s16)(__u16)(v >> 32);
	r->cfa_type = (__u8)(v >> 48);
	r->rbp_type = (__u8)(v >> 56);
}

/* Source of a new process's empty cache: too big for the BPF stack. */
const struct alys_proc empty_proc = {};

/* The frame count lives in s->nr, map memory, so that the verifier does not
 * track it precisely and can prune the callback's states. */
struct unwind_ctx {
	struct alys_rb_stack *s;
	struct thread_state *st;
	struct walk_state *ws;	/* the thread's ring of frames */
	struct walk_meta *w, *old;	/* this walk's, the last walk's */
	struct thread_pages *pages;
	__u64 pc, sp, bp;
	__u64 page0;		/* the first sp's page number */
	__u64 sp0;		/* the first sp */
	__u64 mm;		/* the address space: its unwind_procs entry */
	__u32 epoch;		/* that entry's */
};

/* Frame k of this walk, and of the last one, in the ring. */
static __always_inline struct walk_frame *this_frame(struct unwind_ctx *c, __u32 k)
{
	return &c->ws->f[ring_pos(c->w->base, k)];
}

static __always_inline struct walk_frame *last_frame(struct unwind_ctx *c, __u32 k)
{
	return &c->ws->f[ring_pos(c->old->base, k)];
}

/*
 * The word at a, inside the span (a - sp0 <= span_len - 8): from the copy
 * at where (the thread's pages), or, mapped, where it lies (where: the
 * direct map). Values, not pointers to them, and no store: a store to the
 * stack would have the compiler load the context's fields again.
 */
static __always_inline __u64 span_word(const struct thread_state *st, bool mapped,
				       const __u8 *where, __u64 sp0, __u64 a)
{
	if (!mapped)
		return *(const __u64 *)(where + (a - sp0));
	return *(const volatile __u64 *)(where + st->span_phys[((a >> 12) - (sp0 >> 12)) & 15] +
					 (a & 4095));
}

/* Whether this walk's span was mapped (map_span), not copied. */
static __always_inline bool span_in_place(const struct thread_state *st)
{
	return direct_map_pfn_mask && st->span_mapped;
}

/* Whether span_word reads the word at a: mapped, one that straddles two
 * pages is not. */
static __always_inline bool span_word_ok(bool mapped, __u64 a)
{
	return !mapped || (a & 4095) <= 4096 - 8;
}

/*
 * A user read costs ~60 ns whatever its size up to a few hundred bytes,
 * and a walk makes one or two a frame: read the stack a page at a time
 * instead, on first use. A page that cannot be read whole (past the
 * stack's end) and a value across a page boundary are read directly.
 */
static __always_inline int stack_read(struct unwind_ctx *c, __u64 addr, __u64 *v)
{
	__u64 pg = (addr >> 12) - c->page0, rel = addr - c->sp0;
	__u32 off = addr & 4095;
	__u8 *page;

	/* inside the span copied or mapped at the start (copy_last_span) */
	if (rel < ALYS_SPAN_MAX - 8 && rel + 8 <= c->st->span_len) {
		if (!span_in_place(c->st)) {
			*v = span_word(c->st, false, (const __u8 *)c->pages + (c->sp0 & 4095),
				       c->sp0, addr);
			return 0;
		}
		if (span_word_ok(true, addr)) {
			*v = span_word(c->st, true, bpf_rdonly_cast((void *)direct_map_base, 0),
				       c->sp0, addr);
			return 0;
		}
	}

	if (pg >= ALYS_STACK_PAGES || off > 4096 - 8 || (c->st->pages_bad & (1u << pg))) {
		c->st->words_read++;
		return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
	}
	page = c->pages->p[pg];
	if (!(c->st->pages_loaded & (1u << pg))) {
		if (bpf_probe_read_user(page, 4096, (void *)(addr & ~4095ULL))) {
			c->st->pages_bad |= 1u << pg;
			c->st->words_read++;
			return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
		}
		c->st->pages_loaded |= 1u << pg;
	}
	off &= 4095;
	if (off > 4096 - 8)
		return -1;
	*v = *(__u64 *)(page + off);
	return 0;
}

/*
 * Reusing the previous walk. A step's result depends only on its state
 * (pc, sp, bp), the unwind rows (the same while the process's epoch is)
 * and the words it reads from the stack. So when this walk reaches a
 * frame whose state the thread's last walk had too (same CFA, return
 * address and rbp), the steps after it are the last walk's as long as the
 * words those read still hold the values read then: the walk goes on by
 * checking the last walk's next frame (its return address slot and saved
 * rbp), not by walking it. A frame that changed sends it back to walking,
 * from the last frame checked; so does the end of the last walk where
 * that stopped at the frame limit with more frames than this one has.
 * Where it ended otherwise, or at the limit at this walk's frame number,
 * what its last step read is checked too, and this walk ends there as that
 * one did (cut, or not). A deep program's consecutive allocations share
 * most of their stack (a recursion's path from its root), and checking a
 * frame costs a read and a compare where walking it costs a row lookup
 * too.
 *
 * The frames lie in a ring twice the frame limit. A walk writes its own
 * half apart from the last walk's frames until it meets one of them; then
 * it moves its base so that the frames it shares with the last walk are
 * the ones already in the ring (only the few above the meeting move), and
 * the check is loads and compares, with nothing copied.
 */

/* Tests turn it off (ALYS_BPF_NO_REUSE): the stacks must not change. */
const volatile bool reuse_walks = true;

/* Frame nr was found at cfa: does the last walk have it (the same state)?
 * Its frames' CFAs rise as this walk's do: a cursor follows, a few frames
 * a step. */
static __always_inline bool in_last_walk(struct unwind_ctx *c, __u64 cfa, __u64 ra)
{
	struct walk_state *ws = c->ws;
	__u32 pj = ws->pj, onr = c->old->nr;
	struct walk_frame *of;

	for (int i = 0; i < 4; i++) {
		if (pj >= onr || last_frame(c, pj)->cfa >= cfa)
			break;
		pj++;
	}
	ws->pj = pj;
	if (pj >= onr) {
		ws->matching = 0;
		return false;
	}
	of = last_frame(c, pj);
	return of->cfa == cfa && of->ip == ra && of->bp == c->bp;
}

/* The stack is cut: a caller was found past the frame limit. */
static __always_inline void mark_truncated(struct unwind_ctx *c)
{
	c->s->flags |= ALYS_STACK_FLAG_TRUNCATED;
	count(c->st->slot, ALYS_CNT_STACK_TRUNCATED);
}

/* The word at slot is still val (a slot 0 was not read: nothing to check). */
static __always_inline bool still_reads(struct unwind_ctx *c, __u64 slot, __u64 val)
{
	__u64 v;

	return !slot || (!stack_read(c, slot, &v) && v == val);
}

/* Back to walking from the last frame this walk has (walked or checked):
 * the state is set here, not at each frame checked. */
static __always_inline long walk_on(struct unwind_ctx *c, __u32 nr)
{
	struct walk_frame *f = this_frame(c, nr - 1);

	c->pc = f->ip;
	c->sp = f->cfa;
	c->bp = f->bp;
	return 0;
}

/* One step while checking: the last walk's frame ws->pj, which lies where
 * this walk's frame s->nr belongs. Returns what a bpf_loop callback does;
 * ws->copying 0 goes back to walking. */
static __always_inline long copy_step(struct unwind_ctx *c)
{
	struct walk_meta *old = c->old, *w = c->w;
	struct walk_state *ws = c->ws;
	__u32 k = ws->pj, nr = c->s->nr;
	struct walk_frame *of;

	if (k >= old->nr || k >= ALYS_MAX_FRAMES) {
		ws->copying = 0;
		if (!still_reads(c, old->end.slot, old->end.val) ||
		    !still_reads(c, old->end.bp_slot, old->end.bp_val))
			return walk_on(c, nr);	/* its end changed */
		if (old->flags & ALYS_STACK_FLAG_TRUNCATED) {
			/* It stopped at the limit, having found a caller past
			 * it. At the same frame number, the step past would find
			 * that caller again; with fewer frames, walk on. */
			if (nr != old->nr)
				return walk_on(c, nr);
			mark_truncated(c);
		}
		w->end = old->end;
		ws->checked_to = nr;
		return 1;
	}
	of = last_frame(c, k);
	if (!still_reads(c, of->cfa - 8, of->ip) || !still_reads(c, of->bp_slot, of->bp)) {
		ws->copying = 0;
		ws->checked_to = nr;
		return walk_on(c, nr);
	}
	if (nr >= max_frames || nr >= ALYS_MAX_FRAMES) {
		/* a caller past the limit, as a walk would have found it */
		ws->checked_to = nr;
		mark_truncated(c);
		w->end = (struct walk_end){ of->cfa - 8, of->ip, of->bp_slot, of->bp };
		return 1;
	}
	c->s->nr = nr + 1;
	ws->pj = k + 1;
	return 0;
}

/* The memoized row for lookup, if any; *mep the memo slot (to fill). */
static __always_inline bool memo_row(struct unwind_ctx *c, __u64 lookup,
				     struct memo_entry **mep, struct alys_unwind_row *row)
{
	__u32 slot = (__u32)(lookup ^ lookup >> 13) & (UNWIND_MEMO_SLOTS - 1);
	struct memo_entry *me = bpf_map_lookup_elem(&unwind_memo, &slot);

	*mep = me;
	if (me && me->tag == memo_tag(c->epoch, lookup, me->row)) {
		row_unpack(me->row, row);
		return true;
	}
	return false;
}

/* Frames moved a loop step when a walk meets the last one. */
#define ALYS_MOVE_PER_STEP 8

struct move_ctx {
	struct walk_frame *f;
	__u32 src, dst;		/* ring positions of the highest frame, and its new one */
	__u32 n;		/* frames to move */
};

/* Highest first: where the two ranges overlap, the new one is the higher
 * (meet_last_walk), so no frame is overwritten before it has moved. */
static long move_step(__u32 i, struct move_ctx *m)
{
#pragma unroll
	for (__u32 j = 0; j < ALYS_MOVE_PER_STEP; j++) {
		__u32 k = i * ALYS_MOVE_PER_STEP + j;

		if (k >= m->n)
			return 1;
		/* frame k below the highest */
		m->f[ring_pos(m->dst, -k)] = m->f[ring_pos(m->src, -k)];
	}
	return 0;
}

/*
 * This walk's frame nr met the last walk's frame ws->pj. Its base moves so
 * that its frame nr lies there: the last walk's frames after it are then
 * where this walk's next ones belong, to be checked in place. Its frames 1
 * to nr, written half a ring away until now, move (frame nr too: its rbp
 * slot is this walk's, which the next walk's check of the frame after it
 * needs). Before the move they lie at base + 128 + k, after it at
 * old base + pj - nr + k: the new range is 128 + pj - nr (mod 256) above
 * the old, which is more than 0 and, with pj < 128, less than 256 - nr.
 */
static __always_inline void meet_last_walk(struct unwind_ctx *c, __u32 nr)
{
	__u32 base = c->old->base + c->ws->pj - nr;
	struct move_ctx m = {
		.f = c->ws->f,
		.src = c->w->base + nr,
		.dst = base + nr,
		.n = nr,
	};

	c->w->base = base;
	bpf_loop(ALYS_MAX_FRAMES / ALYS_MOVE_PER_STEP, move_step, &m, 0);
}

/* The frame at (c->pc, c->sp, c->bp) from its row: 0 to go on, 1 at the end. */
static __always_inline long walk_row(struct unwind_ctx *c, struct alys_unwind_row *row)
{
	__u64 cfa, ra = 0, bp_slot = 0;
	__u32 nr = c->s->nr;
	struct walk_frame *f;

	switch (row->cfa_type) {
	case ALYS_CFA_RSP:
		cfa = c->sp + row->cfa_offset;
		break;
	case ALYS_CFA_RBP:
		if (!c->bp)
			return 1;
		cfa = c->bp + row->cfa_offset;
		break;
	case ALYS_CFA_PLT:
		cfa = c->sp + 8 + ((c->pc & 15) >= 11 ? 8 : 0);
		break;
	case ALYS_CFA_OUTERMOST:
		return 1;
	default:
		count(c->st->slot, ALYS_CNT_UNWIND_NO_TABLE);
		return 1;
	}
	if (stack_read(c, cfa - 8, &ra)) {
		count(c->st->slot, ALYS_CNT_UNWIND_BAD_READ);
		c->w->valid = 0;
		return 1;
	}
	if (row->rbp_type == ALYS_RBP_OFFSET) {
		bp_slot = cfa + row->rbp_offset;
		if (stack_read(c, bp_slot, &c->bp)) {
			count(c->st->slot, ALYS_CNT_UNWIND_BAD_READ);
			c->w->valid = 0;
			return 1;
		}
	} else if (row->rbp_type != ALYS_RBP_SAME) {
		c->bp = 0;
	}
	/* The stack grows down: a caller's frame is never below ours. Only
	 * a caller found past the limit makes the stack truncated. */
	if (!ra || cfa <= c->sp || nr >= max_frames || nr >= ALYS_MAX_FRAMES) {
		if (ra && cfa > c->sp) {
			mark_truncated(c);
		}
		c->w->end = (struct walk_end){ cfa - 8, ra, bp_slot, c->bp };
		return 1;
	}
	c->sp = cfa;
	c->pc = ra;
	c->s->nr = nr + 1;
	f = this_frame(c, nr);
	f->ip = ra;
	f->cfa = cfa;
	f->bp = c->bp;
	f->bp_slot = bp_slot;
	if (c->ws->matching && in_last_walk(c, cfa, ra)) {
		/* one try: a walk that parts from the last one above is walked */
		c->ws->matching = 0;
		meet_last_walk(c, nr);
		c->ws->copying = 1;
		c->ws->match = c->ws->pj;
		c->ws->match_nr = nr;
		c->ws->pj++;
	}
	return 0;
}

/* One frame walked; its row from the memo or the tables. */
static __always_inline long walk_step(struct unwind_ctx *c)
{
	struct alys_proc_mapping found, *m;
	struct alys_unwind_row *row, memo;
	__u64 lookup = c->s->nr <= 1 ? c->pc : c->pc - 1, rel;
	struct memo_entry *me;
	struct alys_proc *proc;

	if (memo_row(c, lookup, &me, &memo))
		return walk_row(c, &memo);
	/* only here, past the memo: most walks need no mapping */
	proc = bpf_map_lookup_elem(&unwind_procs, &c->mm);
	if (!proc) {
		count(c->st->slot, ALYS_CNT_UNWIND_NO_TABLE);
		return 1;
	}
	m = cached_mapping(proc, lookup);
	if (!m) {
		if (!discover_mapping(proc, lookup, &found)) {
			count(c->st->slot, ALYS_CNT_UNWIND_NO_TABLE);
			return 1;
		}
		m = &found;
	}
	rel = lookup - m->bias;
	if (rel >> 32) {
		count(c->st->slot, ALYS_CNT_UNWIND_NO_TABLE);
		return 1;
	}
	c->st->searches++;
	row = find_row(m->row_first, m->row_count, (__u32)rel);
	if (!row) {
		count(c->st->slot, ALYS_CNT_UNWIND_NO_TABLE);
		return 1;
	}
	if (me) {
		__u64 packed = row_pack(row);

		me->row = packed;
		me->tag = memo_tag(c->epoch, lookup, packed);
	}
	return walk_row(c, row);
}

/* One frame walked if its row is memoized; -1 (nothing done) if not. */
static __always_inline long walk_memoized(struct unwind_ctx *c)
{
	struct alys_unwind_row memo;
	struct memo_entry *me;

	if (!memo_row(c, c->s->nr <= 1 ? c->pc : c->pc - 1, &me, &memo))
		return -1;
	return walk_row(c, &memo);
}

/* Frames checked a loop step: a check is a few loads and compares, so
 * the step's own cost (the call, reloading the context) would be most of
 * it. */
#define ALYS_CHECK_PER_STEP 32

/*
 * copy_step's work for the frames whose slots lie in the span read at the
 * start (nearly all): loads and compares, the cursors in registers,
 * written back once, no helper call on the way to keep them from. Returns
 * 1 when it stopped before ALYS_CHECK_PER_STEP frames: the next one is
 * copy_step's (a slot outside the span, a frame that changed, the limit,
 * the last walk's end). mapped: the span is read where it lies.
 */
static __always_inline int check_in_span(struct unwind_ctx *c, bool mapped)
{
	struct walk_state *ws = c->ws;
	struct walk_frame *f = ws->f;
	__u32 k = ws->pj, nr = c->s->nr, onr = c->old->nr, pos = c->old->base + k, left, i;
	__u32 lim = max_frames < ALYS_MAX_FRAMES ? max_frames : ALYS_MAX_FRAMES;
	const struct thread_state *st = c->st;
	__u64 sp0 = c->sp0, span = st->span_len;
	const __u8 *where = mapped ? bpf_rdonly_cast((void *)direct_map_base, 0)
				   : (const __u8 *)c->pages + (sp0 & 4095);
	int early = 1;

	/* the frames this step may check: those the last walk has left, as
	 * many as the limit leaves room for */
	left = k < onr ? onr - k : 0;
	if (nr >= lim)
		left = 0;
	else if (lim - nr < left)
		left = lim - nr;
	/* a slot at a is inside the span when a - sp0 <= span - 8 */
	if (span < 8 || span > ALYS_SPAN_MAX)
		return 1;
	span -= 8;
	for (i = 0; i < ALYS_CHECK_PER_STEP; i++) {
		struct walk_frame *of = &f[ring_pos(pos, i)];
		__u64 a = of->cfa - 8, b = of->bp_slot;

		if (i >= left || a - sp0 > span || !span_word_ok(mapped, a) ||
		    span_word(st, mapped, where, sp0, a) != of->ip)
			goto out;
		if (b && (b - sp0 > span || !span_word_ok(mapped, b) ||
			  span_word(st, mapped, where, sp0, b) != of->bp))
			goto out;
	}
	early = 0;
out:
	c->s->nr = nr + i;
	ws->pj = k + i;
	return early;
}

/* Frames walked a loop step: the first with any row, the others only from
 * the memo (the tables' binary search once a step keeps the verifier's work
 * small). */
#define ALYS_WALK_PER_STEP 4

static long unwind_step(__u32 i, struct unwind_ctx *c)
{
	(void)i;
	if (!c->ws->copying) {
		long r = walk_step(c);

#pragma unroll
		for (int j = 1; j < ALYS_WALK_PER_STEP; j++) {
			if (r || c->ws->copying)
				return r;
			r = walk_memoized(c);
			if (r < 0)
				return 0;
		}
		return r;
	}
	if (!(span_in_place(c->st) ? check_in_span(c, true) : check_in_span(c, false)))
		return 0;
	return copy_step(c);
}

/* A span mapped rather than copied when the last walk's frames average
 * this many bytes: checked where it lies, a frame costs ~1.5 ns more than
 * in a copy (its slot's page looked up, a guarded load, a cache line of
 * its own; deep_stacks' programs, ~100 frames of 24 bytes mapped: 1,745
 * against 1,589 ns an event), a byte copied ~0.015 ns (the compiler's
 * spans of ~200-byte frames: 331 ns for 22 KB). */
#define ALYS_MAP_FRAME_BYTES 80

/* The span's pages found in the direct map, as many as are from sp on:
 * span_len what they hold of the span. 0: none (copy it). */
static __always_inline __u32 map_span(struct unwind_ctx *c, struct thread_state *st, __u64 len)
{
	__u64 base = direct_map_base, va = c->sp0 & ~4095ull, end = c->sp0 + len, phys;
	const __u8 *dm;
	__u32 n;

	if (!direct_map_pfn_mask || !base)
		return 0;
	/* read each walk, not kept with the address space's epoch: an mm
	 * freed and made again at the same address has another table. A
	 * pointer stored, read back as a number. */
	st->pgd = (__u64)bpf_get_current_task_btf()->mm->pgd;
	if (!st->pgd)
		return 0;
	dm = bpf_rdonly_cast((void *)base, 0);
	for (n = 0; n < ALYS_STACK_PAGES; n++, va += 4096) {
		if (va >= end)
			break;
		phys = dm_user_page(dm, st->pgd - base, va);
		if (!phys)
			break;
		st->span_phys[n] = phys;
	}
	if (!n)
		return 0;
	if (va < end)
		len = va - c->sp0;
	st->span_mapped = n;
	st->span_len = (__u32)len;
	return n;
}

/*
 * A walk that may reuse the last one reads what that one read: its frames'
 * slots, from this sp up to where it ended. Copied in one read, not a page
 * at a time: a user read's fixed cost (~60 ns) is that of copying ~2 KiB,
 * and the compiler's walks copied 6.2 pages each. From sp, not from its
 * page's start: nothing below sp is read. Reads outside the span take the
 * pages' way.
 *
 * A span past the buffer's reach on this stack (the last walk began near
 * this sp: a deep stack, 15% of the compiler's walks) is
 * read as far as the buffer goes, not left to 15 page reads: the bytes
 * are the same, the reads' fixed costs not. Past the reach and far from
 * this sp: another fiber's stack, most likely, which this walk will not
 * meet. A span of big frames is not copied but mapped (map_span).
 */
static __always_inline void copy_last_span(struct unwind_ctx *c, struct thread_state *st)
{
	struct walk_meta *old = c->old;
	__u64 hi = last_frame(c, old->nr - 1)->cfa, len;

	if (old->end.slot && old->end.slot + 8 > hi)
		hi = old->end.slot + 8;
	if (old->end.bp_slot && old->end.bp_slot + 8 > hi)
		hi = old->end.bp_slot + 8;
	len = hi - c->sp0;
	if (hi <= c->sp0)
		return;
	if (len > ALYS_SPAN_MAX) {
		__u64 first = last_frame(c, 1)->cfa;

		if (first + ALYS_SPAN_MAX < c->sp0 || first > c->sp0 + ALYS_SPAN_MAX)
			return;
		len = ALYS_SPAN_MAX;
	}
	if (len >= (__u64)old->nr * ALYS_MAP_FRAME_BYTES && map_span(c, st, len))
		return;
	if (bpf_probe_read_user((__u8 *)c->pages + (c->sp0 & 4095), len, (void *)c->sp0))
		return;
	st->span_len = (__u32)len;
}

static __always_inline void unwind_dwarf(struct pt_regs *regs, struct thread_state *st, __u64 mm)
{
	struct alys_rb_stack *s = &st->scratch;
	__u32 reused;
	struct unwind_ctx c = {
		.s = s,
		.st = st,
		.ws = &st->walks,
		.pc = PT_REGS_IP(regs),
		.sp = PT_REGS_SP(regs),
		.bp = PT_REGS_FP(regs),
		.page0 = PT_REGS_SP(regs) >> 12,
		.sp0 = PT_REGS_SP(regs),
	};

	/* In the thread's state, not here: the verifier would track every
	 * bit pattern of a mask on the stack through the loop. */
	st->pages_loaded = st->pages_bad = 0;
	st->words_read = st->searches = st->span_len = st->span_mapped = 0;

	s->nr = 1;
	st->walk++;
	c.w = &st->walks.m[st->walk & 1];
	c.old = &st->walks.m[(st->walk + 1) & 1];
	c.w->valid = 0;
	c.w->end.slot = c.w->end.bp_slot = 0;
	/* half a ring from the last walk's frames, until it meets them */
	c.w->base = c.old->base + ALYS_MAX_FRAMES;
	this_frame(&c, 0)->ip = c.pc;
	/* No walk without the pages: a pointer that may be NULL in the loop
	 * doubles the states the verifier explores there. */
	c.pages = bpf_task_storage_get(&thread_pages, bpf_get_current_task_btf(), 0,
				       BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c.pages) {
		count(st->slot, ALYS_CNT_NO_THREAD_STATE);
		return;
	}
	/* The address space's epoch, kept by the thread: a hash lookup less
	 * an event. Should the entry be evicted and made again with another
	 * epoch, this thread's memo entries are only apart from the others'. */
	if (st->proc_mm != mm || !st->proc_epoch) {
		struct alys_proc *proc = bpf_map_lookup_elem(&unwind_procs, &mm);

		if (!proc) {
			bpf_map_update_elem(&unwind_procs, &mm, &empty_proc, BPF_NOEXIST);
			proc = bpf_map_lookup_elem(&unwind_procs, &mm);
			if (!proc)
				return;
		}
		if (!proc->epoch)
			proc->epoch = bpf_get_prandom_u32() | 1;
		st->proc_mm = mm;
		st->proc_epoch = proc->epoch;
	}
	c.mm = mm;
	c.epoch = st->proc_epoch;
	c.ws->matching = reuse_walks && c.old->valid && c.old->epoch == c.epoch &&
			 c.old->nr > 1 && c.old->nr <= ALYS_MAX_FRAMES;
	c.ws->pj = 1;
	c.ws->copying = 0;
	c.ws->match = c.ws->match_nr = c.ws->checked_to = 0;
	c.w->valid = 1;
	if (c.ws->matching)
		copy_last_span(&c, st);
	/* One step more than frames: it tells a cut stack from a full one;
	 * two more for going back from checking to walking. */
	bpf_loop(ALYS_MAX_FRAMES + 3, unwind_step, &c, 0);
	/* the frames checked: those after the match (the last walk's match) */
	reused = c.ws->match ? c.ws->pj - c.ws->match - 1 : 0;
	if (reused)
		count_n(st->slot, ALYS_CNT_FRAMES_REUSED, reused);
	if (s->nr > reused)
		count_n(st->slot, ALYS_CNT_FRAMES_WALKED, s->nr - reused);
	/* a copied span's pages: those it touches, from sp's offset in the first */
	if (st->pages_loaded || (st->span_len && !st->span_mapped))
		count_n(st->slot, ALYS_CNT_STACK_PAGES_READ,
			__builtin_popcount(st->pages_loaded) +
			(st->span_len && !st->span_mapped ?
			 ((c.sp0 & 4095) + st->span_len + 4095) / 4096 : 0));
	if (st->span_len) {
		count(st->slot, ALYS_CNT_STACK_SPANS_READ);
		count_n(st->slot, ALYS_CNT_STACK_SPAN_BYTES, st->span_len);
		if (st->span_mapped)
			count(st->slot, ALYS_CNT_STACK_SPANS_MAPPED);
	}
	if (c.ws->match)
		count(st->slot, ALYS_CNT_WALKS_IN_PLACE);
	/* counted in the thread's state as the walk goes: a counter's map
	 * lookup in the loop would add a branch to every state */
	if (st->words_read)
		count_n(st->slot, ALYS_CNT_STACK_WORDS_READ, st->words_read);
	if (st->searches)
		count_n(st->slot, ALYS_CNT_UNWIND_SEARCHES, st->searches);
	/* frame 0, the probe's pc, where the walk's base ended up */
	this_frame(&c, 0)->ip = PT_REGS_IP(regs);
	c.w->nr = s->nr;
	c.w->flags = s->flags;
	c.w->epoch = c.epoch;
}

#endif
