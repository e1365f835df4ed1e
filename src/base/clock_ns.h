/* SPDX-License-Identifier: MIT */
/* A clock read in nanoseconds: CLOCK_MONOTONIC is the BPF program's
 * bpf_ktime_get_ns() and the trace's event times. */
#ifndef ALYS_CLOCK_NS_H
#define ALYS_CLOCK_NS_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
