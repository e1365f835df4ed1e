// SPDX-License-Identifier: MIT
/* Test helper: a shared library for the converter's symbolization tests. */
__attribute__((noinline)) int lib_helper(int x)
{
	volatile int y = x * 3;

	return y + 1;
}
