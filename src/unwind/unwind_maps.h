/* SPDX-License-Identifier: MIT */
/*
 * Loads the unwind rows of the target's ELF files into the BPF maps that
 * bpf/unwind_dwarf.h walks. Rows are built once per build id and shared by
 * every file (inode) with that build id.
 */
#ifndef ALYS_UNWIND_MAPS_H
#define ALYS_UNWIND_MAPS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alys_unwind.h"

struct unwind_object {
	char *path;
	uint64_t ino;
	uint32_t dev;		/* kernel encoding */
	uint8_t build_id[20];
	size_t build_id_len;
	uint32_t row_first, row_count;
	uint64_t vaddr_minus_offset;
	bool uploaded;
};

struct unwind_maps {
	struct unwind_object *objs;
	size_t n, cap;
	size_t nrows;			/* every object's rows, back to back */
	/* the last npending of them, not yet in the BPF array (before it
	 * exists): once written there, they are not kept here */
	struct alys_unwind_row *pending;
	size_t npending, pending_alloc;
	uint32_t rows_cap;		/* max_entries of the BPF array */
	int rows_fd, objects_fd, procs_fd;	/* -1 until the BPF maps exist */
	unsigned failures;
	/* The agent loads sessions on a thread of their own while running
	 * ones add the tables of libraries they map: every function below
	 * takes it. */
	pthread_mutex_t lock;
};

void unwind_maps_init(struct unwind_maps *um);
/* Builds the rows of each ELF file (once per inode and per build id), on
 * as many threads as CPUs, and adds them in the order of paths; once the
 * maps are attached, uploads them. failed(arg, path, err) for each file
 * that fails; a file without unwind information is not a failure (0 rows).
 * 0, or -1 if any failed. */
int unwind_maps_add_all(struct unwind_maps *um, const char *const *paths, size_t n,
			void (*failed)(void *arg, const char *path, const char *err), void *arg);
/* Rows built so far: the loader sizes the BPF array from it. */
size_t unwind_maps_rows(struct unwind_maps *um);
/* Files and rows, for a message. */
void unwind_maps_stats(struct unwind_maps *um, size_t *files, size_t *rows);
/* The BPF maps of the first program loaded (kept open here, so that
 * later programs, the agent's other sessions, reuse them: the rows are
 * per file, not per process). */
int unwind_maps_attach(struct unwind_maps *um, int rows_fd, int objects_fd, int procs_fd,
		       uint32_t rows_cap, char *err, size_t errlen);
bool unwind_maps_attached(struct unwind_maps *um);
/* The maps' fds, -1 until attached (kept open here). */
void unwind_maps_fds(struct unwind_maps *um, int *rows_fd, int *objects_fd, int *procs_fd);
void unwind_maps_free(struct unwind_maps *um);

#endif
