/* SPDX-License-Identifier: MIT */
/*
 * The target's executable mappings, as written to the trace: re-read when a
 * stack holds an address none of them covers (libraries loaded late).
 */
#ifndef ALYS_PROC_MAPS_H
#define ALYS_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/file_keep.h"
#include "base/maps_file.h"
#include "core/trace_writer.h"

struct mapping {
	uint64_t start, end, offset;
	char *path;
};

struct proc_maps {
	pid_t pid;
	struct mapping *v;
	size_t n, cap;
	/* file_keep.h: copies of the files this machine cannot open by
	 * their mapped path go here (NULL: none are made); why one could not
	 * be kept is said on stderr unless quiet, once per file */
	char *keep_dir;
	bool keep_all;		/* even files this machine has by their paths */
	bool keep_quiet;
	struct file_keep_stats kept;
};

void proc_maps_init(struct proc_maps *pm, pid_t pid);
/* Records one mapping unless already known. build_id NULL: read from path
 * (not for anonymous memory, recorded as such). Returns 1 if it was new. */
int proc_maps_add(struct proc_maps *pm, struct trace_writer *w, uint64_t start,
		  uint64_t end, uint64_t offset, const char *path,
		  const uint8_t *build_id, size_t build_id_len);
/* From now on, keep the mapped files that the converter would not find on
 * this machine by their paths (file_keep.h) in dir, or OUTPUT.debug when
 * dir is NULL; all of them when pm's process runs in another root. */
void proc_maps_keep_files(struct proc_maps *pm, const char *dir, const char *output,
			  bool quiet);
/* After an exec the old mappings are gone. */
void proc_maps_forget(struct proc_maps *pm);
/* Writes a mapping record for each executable mapping not seen before.
 * Returns the number of new mappings, or -1 when the process is gone. */
int proc_maps_refresh(struct proc_maps *pm, struct trace_writer *w);
bool proc_maps_covers(const struct proc_maps *pm, uint64_t ip);
void proc_maps_free(struct proc_maps *pm);

#endif
