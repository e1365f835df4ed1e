// SPDX-License-Identifier: MIT
#include "core/mmap_watch.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DATA_PAGES 16	/* 64 KiB per CPU: mappings are few */

static int open_on_cpu(struct mmap_watch *mw, pid_t tid, int cpu, int enable_on_exec)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.build_id = 1,
		.comm = 1,
		.comm_exec = 1,
		.inherit = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = enable_on_exec,
		.enable_on_exec = enable_on_exec,
		.watermark = 1,
		.wakeup_watermark = 1,
	};
	long page = sysconf(_SC_PAGESIZE);
	int fd;
	void *buf;

	if (mw->n == sizeof(mw->fds) / sizeof(mw->fds[0]))
		return -E2BIG;
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno == ENODEV ? 0 /* CPU offline */ : -errno;
	mw->data_size = (size_t)page * DATA_PAGES;
	buf = mmap(NULL, page + mw->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED) {
		int e = -errno;

		close(fd);
		return e;
	}
	mw->fds[mw->n] = fd;
	mw->bufs[mw->n] = buf;
	mw->n++;
	return 0;
}

/* The kernel refuses to mmap an inherited event that is not bound to a CPU:
 * one event per CPU, as perf record does. */
static int open_one(struct mmap_watch *mw, pid_t tid, int enable_on_exec)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	for (int cpu = 0; cpu < ncpu; cpu++) {
		int e = open_on_cpu(mw, tid, cpu, enable_on_exec);

		if (e)
			return e;
	}
	return 0;
}

int mmap_watch_launch(struct mmap_watch *mw, pid_t child, char *err, size_t errlen)
{
	int e;

	memset(mw, 0, sizeof(*mw));
	e = open_one(mw, child, 1);
	if (e)
		snprintf(err, errlen, "cannot watch the mappings of pid %d (perf_event_open): %s",
			 child, strerror(-e));
	return e ? -1 : 0;
}

int mmap_watch_attach(struct mmap_watch *mw, pid_t pid, char *err, size_t errlen)
{
	char dir[64];
	struct dirent *de;
	DIR *d;
	int e = 0;

	memset(mw, 0, sizeof(*mw));
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot list the threads of pid %d: %s", pid, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0)
			continue;
		e = open_one(mw, tid, 0);
		/* A thread that exited meanwhile is no loss. */
		if (e == -ESRCH)
			e = 0;
		if (e)
			break;
	}
	closedir(d);
	if (e)
		snprintf(err, errlen, "cannot watch the mappings of pid %d (perf_event_open): %s",
			 pid, strerror(-e));
	return e ? -1 : 0;
}

struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct comm_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

static void handle(const struct perf_event_header *h,
		   void (*fn)(void *ctx, const struct mmap_info *mi), void *ctx)
{
	struct mmap_info mi = { 0 };

	if (h->type == PERF_RECORD_MMAP2 && h->size > sizeof(struct mmap2_rec)) {
		const struct mmap2_rec *r = (const void *)h;
		size_t maxlen = h->size - sizeof(*r);

		if (!(r->prot & 4 /* PROT_EXEC */) || !memchr(r->filename, 0, maxlen))
			return;
		mi.pid = (pid_t)r->pid;
		mi.start = r->addr;
		mi.end = r->addr + r->len;
		mi.offset = r->pgoff;
		mi.path = r->filename;
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID && r->build_id_size <= 20) {
			mi.build_id = r->build_id;
			mi.build_id_len = r->build_id_size;
		}
		fn(ctx, &mi);
	} else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		   h->size >= sizeof(struct comm_rec)) {
		const struct comm_rec *r = (const void *)h;

		mi.pid = (pid_t)r->pid;
		mi.exec = 1;
		fn(ctx, &mi);
	}
}

void mmap_watch_drain(struct mmap_watch *mw,
		      void (*fn)(void *ctx, const struct mmap_info *mi), void *ctx)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < mw->n; i++) {
		struct perf_event_mmap_page *meta = mw->bufs[i];
		const char *data = (const char *)mw->bufs[i] + page;
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = meta->data_tail;

		while (tail < head) {
			size_t off = tail % mw->data_size;
			const struct perf_event_header *h = (const void *)(data + off);
			struct perf_event_header copy;

			/* A record may wrap around the end of the buffer. */
			if (off + sizeof(copy) > mw->data_size) {
				size_t first = mw->data_size - off;

				memcpy(&copy, data + off, first);
				memcpy((char *)&copy + first, data, sizeof(copy) - first);
				h = &copy;
			}
			if (h->size < sizeof(*h) || h->size > sizeof(mw->scratch))
				break;
			if (off + h->size > mw->data_size) {
				size_t first = mw->data_size - off;

				memcpy(mw->scratch, data + off, first);
				memcpy(mw->scratch + first, data, h->size - first);
				h = (const void *)mw->scratch;
			}
			handle(h, fn, ctx);
			tail += h->size;
		}
		__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	}
}

void mmap_watch_close(struct mmap_watch *mw)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < mw->n; i++) {
		munmap(mw->bufs[i], page + mw->data_size);
		close(mw->fds[i]);
	}
	mw->n = 0;
}
