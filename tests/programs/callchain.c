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
 *
 * callchain-c N huge: instead, N GC_malloc_atomic calls at the end of
 * big_rec 40 frames deep, each frame with a 512-byte buffer, on a stack of
 * its own in a transparent huge page (madvise(MADV_HUGEPAGE), 2 MiB
 * aligned): how a walk reads a stack that one page-table entry maps
 * (bpf/direct_map.h). Prints HUGE_KB=<the stack's AnonHugePages> and
 * COUNT=<N>.
 */
#include <gc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

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

#define BIG_DEPTH 40
#define HUGE (2ul << 20)

static long big_n;
static ucontext_t main_ctx, big_ctx;

__attribute__((noinline, noipa)) long big_rec(int depth, volatile char *up)
{
	volatile char buf[512];
	long r = 0;

	buf[0] = (char)depth;
	if (depth < BIG_DEPTH)
		return big_rec(depth + 1, buf) + 1 + up[0];
	for (long i = 0; i < big_n; i++) {
		void *p = GC_MALLOC_ATOMIC(LEAF_SIZE);

		if (!p) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		r += (long)((char *)p)[0];
	}
	return r + up[0];
}

static void big_main(void)
{
	static volatile char top;

	big_rec(1, &top);
}

/* The stack's AnonHugePages in /proc/self/smaps, in kB. */
static long huge_kb(void *stack)
{
	char line[256];
	unsigned long lo, hi;
	long kb = -1, v;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (unsigned long)stack >= lo && (unsigned long)stack < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			kb = v;
	}
	fclose(f);
	return kb;
}

static int run_huge(long n)
{
	char *map = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *stack;

	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	stack = (char *)(((unsigned long)map + HUGE - 1) & ~(HUGE - 1));
	if (madvise(stack, HUGE, MADV_HUGEPAGE)) {
		perror("madvise");
		return 1;
	}
	memset(stack, 0, HUGE);	/* faulted in as one huge page */
	/* the collector scans from sp to the main stack: not from here */
	GC_disable();
	big_n = n;
	getcontext(&big_ctx);
	big_ctx.uc_stack.ss_sp = stack;
	big_ctx.uc_stack.ss_size = HUGE;
	big_ctx.uc_link = &main_ctx;
	makecontext(&big_ctx, big_main, 0);
	printf("HUGE_KB=%ld\n", huge_kb(stack));
	swapcontext(&main_ctx, &big_ctx);
	printf("COUNT=%ld\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	long result;

	GC_INIT();
	if (argc > 2 && !strcmp(argv[2], "huge"))
		return run_huge(n);
	result = chain_a(n);
	printf("SIZE=%d\nCOUNT=%ld\nRESULT=%ld\n", LEAF_SIZE, n, result + n);
	return 0;
}
