/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte-based sampling, decided here at function entry, per thread: each byte
 * allocated is sampled with probability 1/N, as in tcmalloc and Go. A thread
 * counts down an exponentially distributed number of bytes (mean N); the
 * call that crosses zero is sampled and a new interval is drawn. Unlike a
 * fixed counter this cannot alias with a periodic allocation pattern. A call
 * of s bytes is sampled with probability 1 - exp(-s/N), so the daemon gives
 * it the weight s / (1 - exp(-s/N)) bytes: totals are unbiased estimates.
 */
#ifndef ALYS_SAMPLE_H
#define ALYS_SAMPLE_H

#define NEG_LOG_BITS 10
#define NEG_LOG_SHIFT 20	/* fixed point of neg_log_table */
#define LN2_FIXED 726817	/* ln(2) << 20 */

/* neg_log_table[j] = -ln((2^10 + j + 0.5) / 2^11) << 20: -ln of a uniform
 * value in [1/2, 1), filled in by the loader (no floating point here). */
const volatile __u32 neg_log_table[1 << NEG_LOG_BITS];

static __always_inline __u32 leading_zeros(__u32 x)
{
	__u32 n = 0;

	if (!(x & 0xffff0000)) { n += 16; x <<= 16; }
	if (!(x & 0xff000000)) { n += 8; x <<= 8; }
	if (!(x & 0xf0000000)) { n += 4; x <<= 4; }
	if (!(x & 0xc0000000)) { n += 2; x <<= 2; }
	if (!(x & 0x80000000)) { n += 1; }
	return n;
}

/* An exponentially distributed byte count of mean sample_mean:
 * -ln(u) * mean, with u = m * 2^-k, m in [1/2, 1), so -ln(u) = k ln 2 -
 * ln(m), the latter from the table. */
static __always_inline __s64 draw_interval(void)
{
	__u32 r = bpf_get_prandom_u32() | 1;
	__u32 k = leading_zeros(r);
	__u32 m = r << k;
	__u64 neg_log = (__u64)k * LN2_FIXED +
			neg_log_table[(m >> (31 - NEG_LOG_BITS)) & ((1 << NEG_LOG_BITS) - 1)];

	return (__s64)((neg_log * sample_mean) >> NEG_LOG_SHIFT);
}

/* Whether a call of size bytes on this thread is sampled. */
static __always_inline bool sample_call(struct thread_state *st, __u64 size)
{
	if (!sample_mean)
		return true;
	if (!st->sampling_started) {
		st->bytes_until_sample = draw_interval();
		st->sampling_started = 1;
	}
	st->bytes_until_sample -= (__s64)size;
	if (st->bytes_until_sample > 0)
		return false;
	/* Memoryless: the overshoot needs no carrying over. */
	st->bytes_until_sample = draw_interval();
	return true;
}

static __always_inline void submit_event(struct alys_sess *S, __u8 kind, __u8 depth,
					 __u64 size, __u64 addr, __u64 old_addr,
					 __u64 stack_key, __u32 gc_no);
static __always_inline __u32 gc_no_of(struct alys_sess *S, struct pt_regs *regs, __u8 kind);
static __always_inline __u64 collect_stack(struct pt_regs *regs,
					   struct thread_state *st);

/* An unsampled realloc gives up a sampled block: record that as its free. */
static __always_inline void forget_sampled(struct alys_sess *S, struct pt_regs *regs,
					   struct thread_state *st,
					   __u64 old_addr, __u32 depth)
{
	if (!untrack_block(S, old_addr))
		return;
	submit_event(S, ALYS_KIND_FREE, depth, 0, old_addr, 0, collect_stack(regs, st),
		     gc_no_of(S, regs, ALYS_KIND_FREE));
}

#endif
