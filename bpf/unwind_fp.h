/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frame-pointer walk (--unwind=fp), for code built with frame pointers.
 * At the probe, rsp still points at the return address into the caller and
 * rbp is the caller's frame pointer: [rbp] is the next rbp, [rbp+8] the next
 * return address.
 */
#ifndef ALYS_UNWIND_FP_H
#define ALYS_UNWIND_FP_H

struct fp_frame {
	__u64 next_bp;
	__u64 ret;
};

struct fp_ctx {
	struct alys_rb_stack *s;
	struct walk_frame *f;	/* the thread's ring (struct walk_state), from 0 */
	__u64 sp, bp;
	__u32 slot;		/* the session's, for its counters */
};

/* Frame i (from 2): a bpf_loop step, so that the verifier checks one
 * step rather than 128 unrolled ones beside the rest of the program. */
static long fp_step(__u32 j, struct fp_ctx *c)
{
	__u32 i = j + 2;
	struct fp_frame f;

	/* Frames live above the probe's sp; anything else is not a frame
	 * pointer. */
	if (c->bp <= c->sp || c->bp & 7)
		return 1;
	if (bpf_probe_read_user(&f, sizeof(f), (void *)c->bp) || !f.ret)
		return 1;
	/* Only a caller found past the limit makes the stack truncated. */
	if (i >= max_frames || i >= ALYS_MAX_FRAMES) {
		c->s->flags |= ALYS_STACK_FLAG_TRUNCATED;
		count(c->slot, ALYS_CNT_STACK_TRUNCATED);
		return 1;
	}
	c->f[i & (ALYS_MAX_FRAMES - 1)].ip = f.ret;
	c->s->nr = i + 1;
	if (f.next_bp <= c->bp)
		return 1;
	c->bp = f.next_bp;
	return 0;
}

static __always_inline void unwind_fp(struct pt_regs *regs, struct thread_state *st)
{
	struct alys_rb_stack *s = &st->scratch;
	struct walk_meta *w = &st->walks.m[st->walk & 1];
	struct fp_ctx c = { .s = s, .f = st->walks.f, .sp = PT_REGS_SP(regs),
			    .bp = PT_REGS_FP(regs), .slot = st->slot };
	__u64 ret = 0;

	/* frames from the ring's start; no walk of the DWARF kind to reuse */
	w->base = 0;
	w->valid = 0;
	st->walks.f[0].ip = PT_REGS_IP(regs);
	s->nr = 1;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)c.sp) || !ret)
		return;
	st->walks.f[1].ip = ret;
	s->nr = 2;
	bpf_loop(ALYS_MAX_FRAMES - 1, fp_step, &c, 0);
}

#endif
