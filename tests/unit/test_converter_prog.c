// SPDX-License-Identifier: MIT
/* Test helper: a program whose functions the converter tests point fake
 * stacks at. Never run; only its symbols and line tables are used. */
#include <stdlib.h>

void *GC_malloc(size_t n);
void *GC_malloc_atomic(size_t n);
void *GC_realloc(void *p, size_t n);
void GC_free(void *p);
int lib_helper(int x);

__attribute__((noinline)) void *GC_malloc(size_t n)
{
	return calloc(1, n);
}

__attribute__((noinline)) void *GC_malloc_atomic(size_t n)
{
	return malloc(n);
}

__attribute__((noinline)) void *GC_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

__attribute__((noinline)) void GC_free(void *p)
{
	free(p);
}

__attribute__((noinline)) void *make_widget(int i)
{
	void *p = GC_malloc(16 + (size_t)i);

	return p;
}

__attribute__((noinline)) void *parse_line(int i)
{
	return GC_malloc_atomic((size_t)i);
}

__attribute__((noinline)) void *grow_buffer(void *p, int i)
{
	return GC_realloc(p, (size_t)i * 2);
}

int main(int argc, char **argv)
{
	void *a = make_widget(argc);
	void *b = parse_line(argc);

	(void)argv;
	a = grow_buffer(a, argc);
	GC_free(b);
	return a != NULL;
}
