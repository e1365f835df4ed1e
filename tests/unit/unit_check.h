/* SPDX-License-Identifier: MIT */
/*
 * The C unit tests' one check: a line "ok   WHAT" or "FAIL WHAT" each, and
 * last "N passed, M failed", the line tests/run-all.sh reads; and their one
 * source of random inputs.
 */
#ifndef ALYS_UNIT_CHECK_H
#define ALYS_UNIT_CHECK_H

#include <stdio.h>

static int unit_passed, unit_failed;

static void check(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	if (ok)
		unit_passed++;
	else
		unit_failed++;
}

/* The tests' random inputs: xorshift64, the same sequence every run. */
static inline unsigned long long unit_rand(void)
{
	static unsigned long long x = 88172645463325252ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* The last line; main's exit status. */
static int unit_summary(void)
{
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed != 0;
}

#endif
