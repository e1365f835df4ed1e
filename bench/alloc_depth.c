// SPDX-License-Identifier: MIT
/*
 * Benchmark target: allocates COUNT times through GC_malloc_atomic at a
 * stack DEPTH frames deep (frames of its own, plus main and libc's start),
 * built without frame pointers, and prints the time per call.
 *   alloc_depth DEPTH COUNT
 */
#include <gc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile void *sink;

__attribute__((noinline)) static void allocate(long count)
{
	for (long i = 0; i < count; i++)
		sink = GC_malloc_atomic(16);
}

__attribute__((noinline)) static long descend(int depth, long count)
{
	long r;

	if (depth <= 1) {
		allocate(count);
		return 0;
	}
	r = descend(depth - 1, count);
	/* Not a tail call: each level keeps a real frame. */
	__asm__ volatile("" : : "r"(r) : "memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 10;
	long count = argc > 2 ? atol(argv[2]) : 100000;
	struct timespec a, b;

	GC_INIT();
	/* Warm the heap so collections don't dominate what is measured. */
	descend(depth, 1000);
	clock_gettime(CLOCK_MONOTONIC, &a);
	descend(depth, count);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_call=%.1f\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / count);
	return 0;
}
