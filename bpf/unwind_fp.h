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

static __always_inline void unwind_fp(struct pt_regs *regs, struct alys_rb_stack *s)
{
	__u64 sp = PT_REGS_SP(regs);
	__u64 bp = PT_REGS_FP(regs);
	__u64 ret = 0;
	__u32 nr = 0;

	s->ips[nr++] = PT_REGS_IP(regs);
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)sp) || !ret) {
		s->nr = nr;
		return;
	}
	s->ips[nr++] = ret;
	for (__u32 i = 2; i <= ALYS_MAX_FRAMES; i++) {
		struct fp_frame f;

		/* Frames live above the probe's sp; anything else is not a
		 * frame pointer. */
		if (bp <= sp || bp & 7)
			break;
		if (bpf_probe_read_user(&f, sizeof(f), (void *)bp) || !f.ret)
			break;
		/* Only a caller found past the limit makes the stack truncated. */
		if (i >= max_frames || i >= ALYS_MAX_FRAMES) {
			s->flags |= ALYS_STACK_FLAG_TRUNCATED;
			count(ALYS_CNT_STACK_TRUNCATED);
			break;
		}
		s->ips[i & (ALYS_MAX_FRAMES - 1)] = f.ret;
		nr = i + 1;
		if (f.next_bp <= bp)
			break;
		bp = f.next_bp;
	}
	s->nr = nr;
}

#endif
