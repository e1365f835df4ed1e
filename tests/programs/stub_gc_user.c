/* stub_gc_user.c: allocates through libgcstub.so (stub_gc.c): 20000
 * blocks of 100 bytes from GC_malloc, each freed. Prints CALLS=20000. */
#include <stdio.h>
#include <stdlib.h>

void *GC_malloc(size_t n);
void GC_free(void *p);

int main(void)
{
	for (int i = 0; i < 20000; i++) {
		char *volatile p = GC_malloc(100);

		p[0] = 1;
		GC_free(p);
	}
	printf("CALLS=20000\n");
	return 0;
}
