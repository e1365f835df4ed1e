/*
 * jit_alloc.c -- allocations made from code that no file holds, as a JIT
 * makes them: a stub of machine code that calls GC_malloc(48), copied into
 *   - anonymous memory (mmap MAP_ANONYMOUS, then PROT_EXEC): "//anon"
 *   - a memfd mapped PROT_EXEC: "/memfd:alys-jit (deleted)"
 *
 * Usage: jit_alloc [N_ANON] [N_MEMFD]      (defaults 1000 and 500)
 * Output (stdout): ANON=<N_ANON> MEMFD=<N_MEMFD>; exit 0.
 * Every GC_malloc(48) of the program is made by one of the stubs.
 */
#define _GNU_SOURCE
#include <gc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void *(*stub_fn)(void);

/* push %rbp; mov $48,%edi; movabs $GC_malloc,%rax; call *%rax; pop %rbp; ret */
static size_t make_stub(uint8_t *code)
{
	static const uint8_t head[] = { 0x55, 0xbf, 48, 0, 0, 0, 0x48, 0xb8 };
	static const uint8_t tail[] = { 0xff, 0xd0, 0x5d, 0xc3 };
	void *(*target)(size_t) = GC_malloc;
	size_t n = 0;

	memcpy(code + n, head, sizeof(head));
	n += sizeof(head);
	memcpy(code + n, &target, 8);
	n += 8;
	memcpy(code + n, tail, sizeof(tail));
	return n + sizeof(tail);
}

static stub_fn anon_stub(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	make_stub(p);
	if (mprotect(p, page, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		exit(1);
	}
	return (stub_fn)p;
}

static stub_fn memfd_stub(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t code[64] = { 0 };
	int fd = memfd_create("alys-jit", 0);
	void *p;

	if (fd < 0 || ftruncate(fd, page) ||
	    pwrite(fd, code, make_stub(code), 0) < 0) {
		perror("memfd");
		exit(1);
	}
	p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap memfd");
		exit(1);
	}
	close(fd);
	return (stub_fn)p;
}

int main(int argc, char **argv)
{
	long n_anon = argc > 1 ? atol(argv[1]) : 1000;
	long n_memfd = argc > 2 ? atol(argv[2]) : 500;
	stub_fn a, m;

	GC_INIT();
	a = anon_stub();
	m = memfd_stub();
	for (long i = 0; i < n_anon; i++)
		if (!a())
			return 1;
	for (long i = 0; i < n_memfd; i++)
		if (!m())
			return 1;
	printf("ANON=%ld MEMFD=%ld\n", n_anon, n_memfd);
	return 0;
}
