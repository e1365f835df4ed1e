/* SPDX-License-Identifier: MIT */
/*
 * The files a running process mapped, opened as the kernel mapped them, and
 * kept by build id for when the process is gone.
 *
 * A containerized process names files inside its own root: the host has no
 * file by that name, or another one. /proc/PID/map_files/START-END follows
 * the mapping to the very file (any mount namespace or chroot, after a
 * rename or a delete); /proc/PID/root/PATH is the fallback where map_files
 * cannot be followed (it needs CAP_SYS_ADMIN).
 */
#ifndef ALYS_TARGET_FILE_H
#define ALYS_TARGET_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The path that opens the file pid mapped at [start, end) as path, in buf. */
const char *target_file(pid_t pid, uint64_t start, uint64_t end, const char *path,
			char *buf, size_t len);
/* The same when it is known whether pid's map_files can be followed (they
 * all can or none can): a reader of many mappings asks once. */
const char *target_file_as(pid_t pid, uint64_t start, uint64_t end, const char *path,
			   bool map_files, char *buf, size_t len);
/* Whether target_file gave a map_files path. */
bool target_file_is_map_files(const char *file);

/* Beside a trace, where alys-bpf keeps its target's files (TRACE.debug) and
 * alys_converter looks for them. */
#define KEPT_DIR_SUFFIX ".debug"

/* path without the " (deleted)" the kernel adds to a removed file's name:
 * its length. */
size_t target_file_name_len(const char *path);

/*
 * DIR/.build-id/xx/rest.debug (the layout of elfutils, gdb and perf, which
 * look for a file with the binary's symbols there), for a build id of
 * len bytes, in buf; NULL when len is not 2-64.
 */
const char *build_id_cache_path(const char *dir, const uint8_t *id, size_t len, char *buf,
				size_t buflen);

#endif /* ALYS_TARGET_FILE_H */
