/* SPDX-License-Identifier: MIT */
/*
 * The target's executable mappings as the kernel reports them (perf
 * PERF_RECORD_MMAP2, like `perf record`), so that every library is known,
 * with its build id, even when the target exits before the tracer looks at
 * /proc/PID/maps.
 */
#ifndef ALYS_MMAP_WATCH_H
#define ALYS_MMAP_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mmap_info {
	pid_t pid;
	uint64_t start, end, offset;
	const char *path;
	const uint8_t *build_id;	/* NULL: the kernel could not read it */
	size_t build_id_len;
	int exec;			/* 1: the process exec'd: forget old mappings */
};

struct mmap_watch {
	int fds[1024];		/* threads x CPUs */
	void *bufs[1024];
	size_t n;
	size_t data_size;
	char scratch[8192];
};

/* A child held before execve: recording starts at its exec and follows
 * every thread it creates. */
int mmap_watch_launch(struct mmap_watch *mw, pid_t child, char *err, size_t errlen);
/* A running process: one event per existing thread, inherited by new ones. */
int mmap_watch_attach(struct mmap_watch *mw, pid_t pid, char *err, size_t errlen);
void mmap_watch_drain(struct mmap_watch *mw,
		      void (*fn)(void *ctx, const struct mmap_info *mi), void *ctx);
void mmap_watch_close(struct mmap_watch *mw);

#endif
