// SPDX-License-Identifier: MIT
/*
 * Functions that begin with one given instruction, called COUNT times:
 *   insn_targets KIND COUNT      KIND: push nop nop5 jmp jmp32 mov xor
 * prints ns per call. bench/probe_cost.sh puts an empty uprobe on each to
 * show what the first instruction costs a probe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__asm__(".text\n"
	".globl f_push\n.type f_push, @function\nf_push: push %rbp\n pop %rbp\n ret\n"
	".globl f_nop\n.type f_nop, @function\nf_nop: nop\n ret\n"
	".globl f_nop5\n.type f_nop5, @function\nf_nop5: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n ret\n"
	".globl f_jmp\n.type f_jmp, @function\nf_jmp: jmp 1f\n1: ret\n"
	".globl f_jmp32\n.type f_jmp32, @function\nf_jmp32: .byte 0xe9\n .long 0\n ret\n"
	".globl f_mov\n.type f_mov, @function\nf_mov: mov $1, %esi\n ret\n"
	".globl f_xor\n.type f_xor, @function\nf_xor: xor %esi, %esi\n ret\n");
void f_push(void), f_nop(void), f_nop5(void), f_jmp(void), f_jmp32(void),
	f_mov(void), f_xor(void);

static const struct {
	const char *name;
	void (*fn)(void);
} kinds[] = {
	{ "push", f_push }, { "nop", f_nop }, { "nop5", f_nop5 }, { "jmp", f_jmp },
	{ "jmp32", f_jmp32 }, { "mov", f_mov }, { "xor", f_xor },
};

int main(int argc, char **argv)
{
	void (*fn)(void) = NULL;
	struct timespec a, b;
	long n;

	if (argc < 3)
		return 2;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(argv[1], kinds[i].name))
			fn = kinds[i].fn;
	if (!fn)
		return 2;
	n = atol(argv[2]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		fn();
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
