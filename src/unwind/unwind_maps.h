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
	struct alys_unwind_row *rows;	/* every object's rows, back to back */
	size_t nrows, rows_alloc;
	uint32_t rows_uploaded;
	uint32_t rows_cap;		/* max_entries of the BPF array */
	int rows_fd, objects_fd, procs_fd;	/* -1 until the BPF maps exist */
	uint64_t build_ns;		/* time spent building tables */
	unsigned failures;
	/* The agent loads sessions on a thread of their own while running
	 * ones add the tables of libraries they map: every function below
	 * takes it. */
	pthread_mutex_t lock;
};

void unwind_maps_init(struct unwind_maps *um);
/* Builds the rows of an ELF file (once per inode and per build id) and, once
 * the maps are attached, uploads them. Errors go to err; a file without
 * unwind information is not an error (0 rows). */
int unwind_maps_add(struct unwind_maps *um, const char *path, char *err, size_t errlen);
/* Rows built so far: the loader sizes the BPF array from it. */
size_t unwind_maps_rows(struct unwind_maps *um);
/* Files, rows and the time spent building them, for a message. */
void unwind_maps_stats(struct unwind_maps *um, size_t *files, size_t *rows, uint64_t *build_ns);
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
