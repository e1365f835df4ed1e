/* stub_gc.c: a stand-in for libgc exporting only the entry points Crystal
 * calls (GC_malloc, GC_malloc_atomic, GC_realloc, GC_free), on top of
 * malloc: no GC_malloc_kind, no slow paths to probe. Built as
 * libgcstub.so for the --sample refill fallback test. */
#include <stdlib.h>
#include <string.h>

void *GC_malloc(size_t n)
{
	return calloc(1, n);
}

void *GC_malloc_atomic(size_t n)
{
	return malloc(n);
}

void *GC_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

void GC_free(void *p)
{
	free(p);
}
