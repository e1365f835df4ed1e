/*
 * callchain.c -- the callchain.cr chain in C, linked with Boehm GC (libgc).
 *
 * Build: cc -O2 -g -fomit-frame-pointer -fno-inline callchain.c -lgc
 *        (tests/build-programs.sh does this), so the unwinder cannot rely on
 *        frame pointers and needs DWARF CFI.
 *
 * Usage: callchain-c [N]     (N defaults to 1000)
 *
 * Call chain: main -> chain_a -> chain_b -> chain_c, each
 * __attribute__((noinline, noipa)) (no inlining, no cloning such as
 * chain_c.constprop.0), and each caller adds 1 to the callee's result, so no
 * call becomes a tail jump.
 *
 * What it allocates:
 *   - chain_c(n): one GC_malloc of n * sizeof(void *) bytes (the pointer
 *     array), then exactly N GC_malloc_atomic calls of LEAF_SIZE (24) bytes,
 *     each with chain_c, chain_b, chain_a, main on its stack.
 *   - libgc itself may allocate internally during GC_INIT; it does not call
 *     the public GC_malloc* entry points for that.
 *
 * Output (stdout): SIZE=24, COUNT=<N>, RESULT=<n + 2 + sum>. Exit status: 0.
 */
#include <gc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_SIZE 24

static void **leaves;  /* keeps the leaves reachable */

__attribute__((noinline, noipa)) long chain_c(long n)
{
	long sum = 0;
	leaves = GC_MALLOC(n * sizeof(void *));
	if (!leaves) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (long i = 0; i < n; i++) {
		long *leaf = GC_MALLOC_ATOMIC(LEAF_SIZE);
		if (!leaf) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		memset(leaf, 0, LEAF_SIZE);
		leaf[0] = i;
		leaves[i] = leaf;
	}
	for (long i = 0; i < n; i++)
		sum += ((long *)leaves[i])[0];
	return sum;
}

__attribute__((noinline, noipa)) long chain_b(long n)
{
	return chain_c(n) + 1;
}

__attribute__((noinline, noipa)) long chain_a(long n)
{
	return chain_b(n) + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	long result;

	GC_INIT();
	result = chain_a(n);
	printf("SIZE=%d\nCOUNT=%ld\nRESULT=%ld\n", LEAF_SIZE, n, result + n);
	return 0;
}
