/* SPDX-License-Identifier: MIT */
/*
 * The collector's variables that alys-bpf reads from a running target,
 * found through the code of the getters libgc exports (its variables are
 * static: Debian's libgc.so.1 has no .symtab), or by name where a static
 * link kept them in .symtab. Each returns 0, or -1 with the cause in why.
 */
#ifndef ALYS_GC_VARS_H
#define ALYS_GC_VARS_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;

/*
 * The collector's count of bytes allocated: GC_get_total_bytes() returns
 * GC_bytes_allocd + GC_bytes_allocd_before_gc, two words its code loads.
 * --duty reads them around each window (src/core/duty_cycle.h).
 */
int gc_total_bytes_derive(struct elf_file *ef, uint64_t vaddr[2], char *why, size_t whylen);

/*
 * GC_start_call_back, the callback GC_set_start_callback registered (the
 * word GC_get_start_callback() returns): --census --pid puts its trigger
 * on the callback a running program registered at start-up.
 */
int gc_start_callback_derive(struct elf_file *ef, uint64_t *vaddr, char *why, size_t whylen);

/*
 * The roots registered with the collector (GC_add_roots, and the data
 * segments it registers itself): GC_arrays._n_root_sets and
 * _static_roots[] (32-byte struct roots: start, end, next, tmp), their
 * offsets in GC_arrays read from GC_add_roots_inner's code (static in a
 * shared libgc: found as the function GC_add_roots calls that checks
 * MAX_ROOT_SETS, 2048, or 8192 in a large-config build: *max_sets). A heap
 * snapshot copies them.
 */
int gc_static_roots_derive(struct elf_file *ef, uint64_t arrays_vaddr, uint32_t *n_off,
			   uint32_t *roots_off, uint32_t *max_sets, char *why, size_t whylen);

/* GC_stop_world or GC_start_world (internal): its symbol, else (a stripped
 * libgc.so) the function the exported external wrapper calls first. */
int gc_world_func_derive(struct elf_file *ef, const char *internal, const char *external,
			 uint64_t *vaddr, char *why, size_t whylen);

/* GC_try_to_collect_inner: its symbol, else (a stripped libgc.so) the
 * call on GC_gcollect's path that reaches stop_world (GC_stop_world's
 * address) within two calls. */
int gc_collect_inner_derive(struct elf_file *ef, uint64_t stop_world, uint64_t *vaddr,
			    char *why, size_t whylen);

/* Where GC_expand_hp_inner calls GC_add_to_heap: every growth of the heap
 * (the bytes added its second argument, in rsi at the call), and no other
 * (GC_add_to_heap is also tail-called to recycle the collector's scratch
 * memory). By symbol, else (a stripped libgc.so) from GC_expand_hp's
 * code: its inner function's last local call before that returns.
 * expand_inner: that function's start. */
int gc_heap_grow_derive(struct elf_file *ef, uint64_t *expand_inner, uint64_t *call_site,
			char *why, size_t whylen);

/*
 * Where a thread finds GC_thread_key, the __thread pointer to its free
 * lists (struct thread_local_freelists) in a libgc built with thread-local
 * allocation (bpf/predict.h reads the block an allocation will return
 * there). In an executable (libgc linked statically), in its own TLS block
 * at a fixed offset from the thread pointer (the fs base); in a shared
 * libgc, in its module's block, found through the thread's DTV and the
 * module id the dynamic linker writes into a GOT slot.
 */
struct gc_thread_key {
	uint32_t mode;		/* enum alys_tls_mode (ALYS_TLS_NONE: not found) */
	int64_t tpoff;		/* STATIC: its address minus the fs base */
	uint64_t modid_vaddr;	/* DTV: the GOT slot of libgc's module id */
	uint64_t dtpoff;	/* DTV: its offset in the module's block */
};
int gc_thread_key_derive(struct elf_file *ef, struct gc_thread_key *k, char *why,
			 size_t whylen);

#endif
