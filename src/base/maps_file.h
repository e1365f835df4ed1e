/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/maps, read line by line: the one reader of it, for the
 * session's mappings (src/core/proc_maps.h) and for finding libgc in a
 * running process (src/gc/).
 */
#ifndef ALYS_MAPS_FILE_H
#define ALYS_MAPS_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. path is the whole rest of the line (it may
 * hold spaces, and " (deleted)"); "" for an anonymous mapping. */
struct maps_line {
	uint64_t start, end, offset;
	char perms[8];
	const char *path;
	/* Opens the very file mapped (NULL for anonymous memory):
	 * /proc/PID/map_files/START-END, which the kernel follows into any
	 * mount namespace or chroot, after a rename or a delete; where it
	 * cannot be followed, /proc/PID/root/PATH. Never the host's PATH: in a
	 * container that is some other file, or none. */
	const char *file;
};

/* The one reader of /proc/PID/maps: calls fn for each line until fn returns
 * non-zero, and returns that value; 0 after the last line; -1 (errno set)
 * when the file cannot be read, -2 when it is empty (a zombie). */
int proc_maps_each(pid_t pid, int (*fn)(const struct maps_line *l, void *arg), void *arg);
/* An executable mapping of a file (not anonymous memory). */
bool maps_line_is_exec_file(const struct maps_line *l);
/* Executable memory with no file behind it to read symbols or unwind rows
 * from: anonymous (JIT code), memfd, shared memory. Named "//anon" when the
 * kernel gives no name. */
bool mapping_is_anon(const char *path);

#endif
