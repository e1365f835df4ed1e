/* SPDX-License-Identifier: MIT */
/*
 * The Boehm GC entry points of one ELF file (libgc.so, or an executable with
 * libgc linked in statically), and where to probe each.
 */
#ifndef ALYS_GC_PROBES_H
#define ALYS_GC_PROBES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alys_events.h"
#include "gc/gc_layout.h"
#include "gc/gc_vars.h"
#include "gc/probe_place.h"
#include "gc/refill_probe.h"

struct gc_func {
	const char *name;
	unsigned args;		/* argument registers the probe reads */
	bool found;
	uint64_t vaddr;		/* symbol value */
	uint64_t probe_vaddr;	/* vaddr + place.offset */
	uint64_t probe_file_off;	/* what the uprobe is attached at */
	struct probe_place place;
};

struct gc_probes {
	char path[PATH_MAX];	/* file to attach to */
	char name[PATH_MAX];	/* the same, as the target names it (for messages) */
	bool in_executable;	/* libgc linked statically */
	struct gc_func funcs[ALYS_KIND_FREE + 1];	/* by enum alys_kind */
	uint64_t gc_no_vaddr;	/* 0: GC_gc_no not exported */
	struct gc_func collect;	/* GC_gcollect: reads marks before it clears them */
	struct gc_func setcb;	/* GC_set_start_callback: --census finds its trigger */
	uint64_t startcb_vaddr;	/* GC_start_call_back (--census --pid); 0: unknown */
	bool roots_ok;		/* the registered roots' offsets in GC_arrays: */
	uint32_t roots_n_off, roots_off;	/* n_root_sets, static_roots[] */
	uint32_t roots_max;	/* MAX_ROOT_SETS of this build */
	char roots_why[256];	/* why not */
	char startcb_why[256];	/* why not */
	/* the pauses: GC_stop_world's entry, GC_start_world's return */
	struct gc_func stop_world, start_world;
	struct gc_func collect_inner;	/* GC_try_to_collect_inner: the collection */
	char collect_why[PATH_MAX + 128];	/* why it is not found */
	/* the heap's growth: GC_expand_hp_inner's call of GC_add_to_heap */
	struct gc_func heap_grow;
	char grow_why[PATH_MAX + 128];	/* why it is not found */
	char pauses_why[PATH_MAX + 128];	/* why either is not found */
	/* --sample refill: the collector's slow paths. GC_malloc_kind_global
	 * takes every medium and large object (and a thread's first small
	 * ones); the refill probe every small-object free-list refill. */
	struct gc_func kind_global;
	struct refill_probe refill;
	struct gc_func refill_at;	/* the refill probe, as attach_one takes it */
	bool refill_ok;
	uint64_t aip_vaddr;		/* GC_all_interior_pointers, 0: not exported */
	/* the threads' free lists, where an allocation's block is read at
	 * its entry (bpf/predict.h) */
	struct gc_thread_key thread_key;
	char thread_key_why[PATH_MAX + 128];	/* why not */
	uint64_t total_bytes_vaddr[2];	/* GC_get_total_bytes sums these two words */
	bool total_bytes_ok;
	char total_bytes_why[256];	/* why not */
	char refill_why[256];	/* why not */
	bool layout_ok;		/* the mark-byte layout was derived */
	struct gc_layout layout;
	char layout_why[512];	/* why not */
};

/* 0: found; 1: the file has no GC_malloc; -1: error (message in err). */
int gc_probes_resolve(const char *path, struct gc_probes *gp, char *err, size_t errlen);

/*
 * The file a program's libgc comes from: the executable itself (static) or
 * the one of its libraries (see ldso_list) that defines GC_malloc.
 */
struct lib_list;
int gc_probes_for_program(const char *exe, const struct lib_list *libs,
			  struct gc_probes *gp, char *err, size_t errlen);

/*
 * The same for a running process: its executable, else the mapped file that
 * defines GC_malloc, opened through /proc/PID/root so that a process in
 * another mount namespace is traced through its own files.
 */
int gc_probes_for_process(pid_t pid, struct gc_probes *gp, char *err, size_t errlen);

#endif
