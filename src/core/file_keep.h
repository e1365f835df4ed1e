/* SPDX-License-Identifier: MIT */
/*
 * Copies of the target's mapped files that this machine cannot open by the
 * path the target mapped them at (a container's files, a binary replaced
 * on disk since it started), kept by build id (target_file.h's layout) so
 * that alys_converter names their frames after the process, its container
 * and its root file system are gone.
 *
 * A copy, not a hard link: the file's own directory may be on another file
 * system, and a deleted file cannot be linked. copy_file_range lets file
 * systems that can share extents (btrfs, XFS) do so.
 */
#ifndef ALYS_FILE_KEEP_H
#define ALYS_FILE_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum file_keep_result {
	FILE_KEEP_NOT_NEEDED,	/* path on this machine is that file (same build id) */
	FILE_KEEP_HAD,		/* already kept */
	FILE_KEEP_COPIED,
	FILE_KEEP_NO_BUILD_ID,	/* cannot be kept by build id: *err says so */
	FILE_KEEP_FAILED,	/* *err says why */
};

struct file_keep_stats {
	uint64_t files, bytes, ns;	/* copied */
};

/*
 * Keeps the file pid mapped at [start, end) as path, build id id, under dir
 * (which must not be NULL). always: even when path on this machine is that
 * file (the process runs in another root: its files go with it).
 */
enum file_keep_result file_keep(const char *dir, pid_t pid, uint64_t start, uint64_t end,
				const char *path, const uint8_t *id, size_t idlen, bool always,
				struct file_keep_stats *st, char *err, size_t errlen);
/* Who owns what file_keep creates from now on (sudo: the invoking user, as
 * the trace); (uid_t)-1: alys-bpf. */
void file_keep_owner(uid_t uid, gid_t gid);

/* Whether pid runs in another root than ours (a container, a chroot). */
bool file_keep_other_root(pid_t pid);

#endif /* ALYS_FILE_KEEP_H */
