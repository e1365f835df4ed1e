// SPDX-License-Identifier: MIT
#include "unwind/unwind_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "alys_events.h"
#include "lib/elf_file.h"
#include "lib/util.h"
#include "unwind/unwind_table.h"

void unwind_maps_init(struct unwind_maps *um)
{
	memset(um, 0, sizeof(*um));
	um->rows_fd = um->objects_fd = um->procs_fd = -1;
	pthread_mutex_init(&um->lock, NULL);
}

static int upload_object(struct unwind_maps *um, struct unwind_object *o,
			 char *err, size_t errlen)
{
	struct alys_object_key key = { .ino = o->ino, .dev = o->dev };
	struct alys_object val = {
		.row_first = o->row_first,
		.row_count = o->row_count,
		.vaddr_minus_offset = o->vaddr_minus_offset,
	};

	if (bpf_map_update_elem(um->objects_fd, &key, &val, BPF_ANY)) {
		snprintf(err, errlen, "cannot load the unwind table of %s: %s", o->path,
			 strerror(errno));
		return -1;
	}
	o->uploaded = true;
	return 0;
}

/*
 * The pending rows written into the array's memory (BPF_F_MMAPABLE), mapped
 * for that only: an update syscall a row, or a batched one, took ~250 ns a
 * row (0.45 s for the compiler's 1.7M), this ~10 ms. Not kept mapped, nor
 * kept here once written: the daemon's memory holds no copy of the rows.
 */
static int upload_rows(struct unwind_maps *um, char *err, size_t errlen)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), stride;
	long page = sysconf(_SC_PAGESIZE);
	size_t first = um->nrows - um->npending, maplen;
	uint8_t *mem;

	if (!um->npending)
		return 0;
	if (um->nrows > um->rows_cap) {
		snprintf(err, errlen, "unwind tables need %zu rows, more than the %u reserved: "
			 "stacks through the newest libraries will stop there", um->nrows,
			 um->rows_cap);
		return -1;
	}
	if (bpf_obj_get_info_by_fd(um->rows_fd, &info, &len)) {
		snprintf(err, errlen, "cannot read the unwind rows' map: %s", strerror(errno));
		return -1;
	}
	if (info.value_size < sizeof(*um->pending) || info.max_entries < um->nrows) {
		/* the loader sized it: not a user's error */
		snprintf(err, errlen, "internal error: the unwind rows' map holds %u rows of %u "
			 "bytes, fewer or smaller than the %zu of %zu to write", info.max_entries,
			 info.value_size, um->nrows, sizeof(*um->pending));
		return -1;
	}
	/* an array's elements lie 8-byte aligned, back to back */
	stride = (info.value_size + 7) & ~7u;
	maplen = ((size_t)stride * info.max_entries + page - 1) & ~((size_t)page - 1);
	mem = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, um->rows_fd, 0);
	if (mem == MAP_FAILED) {
		snprintf(err, errlen, "cannot write the unwind rows into their map (%u rows): %s",
			 info.max_entries, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < um->npending; i++)
		memcpy(mem + (first + i) * stride, &um->pending[i], sizeof(*um->pending));
	munmap(mem, maplen);
	free(um->pending);
	um->pending = NULL;
	um->npending = um->pending_alloc = 0;
	return 0;
}

static int sync_maps(struct unwind_maps *um, char *err, size_t errlen)
{
	if (um->rows_fd < 0)
		return 0;
	if (upload_rows(um, err, errlen))
		return -1;
	for (size_t i = 0; i < um->n; i++)
		if (!um->objs[i].uploaded && upload_object(um, &um->objs[i], err, errlen))
			return -1;
	return 0;
}

static uint64_t exec_vaddr_minus_offset(struct elf_file *ef)
{
	size_t n;

	if (elf_getphdrnum(ef->elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ef->elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			return ph.p_vaddr - ph.p_offset;
	}
	return 0;
}

static struct unwind_object *new_object(struct unwind_maps *um)
{
	if (um->n == um->cap) {
		size_t cap = um->cap ? um->cap * 2 : 16;
		struct unwind_object *v = realloc(um->objs, cap * sizeof(*v));

		if (!v)
			return NULL;
		um->objs = v;
		um->cap = cap;
	}
	memset(&um->objs[um->n], 0, sizeof(um->objs[0]));
	return &um->objs[um->n++];
}

static int append_rows(struct unwind_maps *um, const struct alys_unwind_row *rows, size_t n)
{
	if (um->npending + n > um->pending_alloc) {
		size_t cap = um->pending_alloc ? um->pending_alloc : 1 << 16;
		struct alys_unwind_row *v;

		while (cap < um->npending + n)
			cap *= 2;
		v = realloc(um->pending, cap * sizeof(*v));
		if (!v)
			return -1;
		um->pending = v;
		um->pending_alloc = cap;
	}
	memcpy(um->pending + um->npending, rows, n * sizeof(*rows));
	um->npending += n;
	um->nrows += n;
	return 0;
}

/* A file's device as the kernel encodes it (what bpf_find_vma gives). */
static uint32_t kernel_dev(const struct stat *st)
{
	return major(st->st_dev) << 20 | minor(st->st_dev);
}

static bool same_file(const struct stat *st, uint64_t ino, uint32_t dev)
{
	return st->st_ino == ino && kernel_dev(st) == dev;
}

/* Its table is known already (the file by inode). */
static bool known_file(const struct unwind_maps *um, const struct stat *st)
{
	for (size_t i = 0; i < um->n; i++)
		if (same_file(st, um->objs[i].ino, um->objs[i].dev))
			return true;
	return false;
}

/* A table built ahead, off the lock (unwind_maps_add_all). */
struct built {
	const char *path;
	uint64_t ino;		/* stat's, to build a file listed twice once */
	uint32_t dev;
	struct alys_unwind_table table;
	enum { BUILD_TODO, BUILD_SKIP, BUILD_DONE } state;	/* SKIP: a known file */
	int rc;			/* alys_unwind_table_build's, when DONE */
	char err[PATH_MAX + 256];
};

/* The file's table, built now or taken from pre (its error too). */
static int build_table(const char *path, struct built *pre, struct alys_unwind_table *table,
		       char *err, size_t errlen)
{
	int rc;

	if (pre && pre->state == BUILD_DONE) {
		*table = pre->table;
		rc = pre->rc;
		if (rc)
			snprintf(err, errlen, "%s", pre->err);
		pre->state = BUILD_SKIP;	/* taken */
		memset(&pre->table, 0, sizeof(pre->table));
		return rc;
	}
	return alys_unwind_table_build(path, table, err, errlen);
}

static int add_locked(struct unwind_maps *um, const char *path, struct built *pre,
		      char *err, size_t errlen)
{
	struct unwind_object *o, *same = NULL;
	struct alys_unwind_table table;
	struct elf_file ef;
	struct stat st;
	uint8_t id[20];
	size_t idlen;
	int ret = 0;

	if (stat(path, &st)) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (known_file(um, &st))
		return 0;
	if (elf_file_open(&ef, path, err, errlen))
		return -1;
	idlen = elf_file_build_id(&ef, id, sizeof(id));
	for (size_t i = 0; idlen && i < um->n && !same; i++)
		if (um->objs[i].build_id_len == idlen && !memcmp(um->objs[i].build_id, id, idlen))
			same = &um->objs[i];
	o = new_object(um);
	if (!o) {
		elf_file_close(&ef);
		return -1;
	}
	o->path = strdup(path);
	o->ino = st.st_ino;
	o->dev = kernel_dev(&st);
	memcpy(o->build_id, id, idlen);
	o->build_id_len = idlen;
	o->vaddr_minus_offset = exec_vaddr_minus_offset(&ef);
	elf_file_close(&ef);
	if (same) {
		o->row_first = same->row_first;
		o->row_count = same->row_count;
		return sync_maps(um, err, errlen);
	}
	if (build_table(path, pre, &table, err, errlen)) {
		um->failures++;
		um->n--;
		free(o->path);
		return -1;
	}
	o->row_first = (uint32_t)um->nrows;
	o->row_count = (uint32_t)table.nrows;
	if (append_rows(um, table.rows, table.nrows))
		ret = -1;
	alys_unwind_table_free(&table);
	if (ret) {
		snprintf(err, errlen, "out of memory for the unwind table of %s", path);
		return -1;
	}
	return sync_maps(um, err, errlen);
}

struct build_queue {
	struct built *b;
	size_t n;
	size_t next;		/* atomic */
};

static void *build_worker(void *arg)
{
	struct build_queue *q = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED)) < q->n) {
		struct built *b = &q->b[i];

		if (b->state != BUILD_TODO)
			continue;
		b->rc = build_table(b->path, NULL, &b->table, b->err, sizeof(b->err));
		b->state = BUILD_DONE;
	}
	return NULL;
}

/* Whether b's file is worth building: not known yet, nor listed before it
 * in the batch (a file unreadable here is built, for its error). */
static bool worth_building(struct unwind_maps *um, struct built *b, const struct built *before)
{
	struct stat st;
	bool known;

	if (stat(b->path, &st))
		return true;
	b->ino = st.st_ino;
	b->dev = kernel_dev(&st);
	for (; before < b; before++)
		if (before->state == BUILD_TODO && same_file(&st, before->ino, before->dev))
			return false;
	pthread_mutex_lock(&um->lock);
	known = known_file(um, &st);
	pthread_mutex_unlock(&um->lock);
	return !known;
}

int unwind_maps_add_all(struct unwind_maps *um, const char *const *paths, size_t n,
			void (*failed)(void *arg, const char *path, const char *err), void *arg)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct build_queue q = { .n = n };
	pthread_t th[8];
	size_t nth = 0, i;
	int ret = 0;

	q.b = xcalloc(n ? n : 1, sizeof(*q.b));
	for (i = 0; i < n; i++) {
		q.b[i].path = paths[i];
		q.b[i].state = worth_building(um, &q.b[i], q.b) ? BUILD_TODO : BUILD_SKIP;
	}
	/* A big program's libraries take ~0.2 s one after another
	 * (the compiler's LLVM alone ~0.1 s): built side by side, added in
	 * order so that rows lie as they would have. */
	while (cpus > 1 && nth < (size_t)cpus - 1 && nth < 8 && nth + 1 < n &&
	       !pthread_create(&th[nth], NULL, build_worker, &q))
		nth++;
	build_worker(&q);
	while (nth)
		pthread_join(th[--nth], NULL);
	for (i = 0; i < n; i++) {
		char err[PATH_MAX + 256];
		int rc;

		pthread_mutex_lock(&um->lock);
		rc = add_locked(um, paths[i], &q.b[i], err, sizeof(err));
		pthread_mutex_unlock(&um->lock);
		alys_unwind_table_free(&q.b[i].table);
		if (rc) {
			ret = -1;
			if (failed)
				failed(arg, paths[i], err);
		}
	}
	free(q.b);
	/* The helpers' tables were built in their own malloc arenas, which
	 * keep what they freed resident (tens of MiB for a big library). */
	if (n > 1)
		malloc_trim(0);
	return ret;
}

size_t unwind_maps_rows(struct unwind_maps *um)
{
	size_t n;

	pthread_mutex_lock(&um->lock);
	n = um->nrows;
	pthread_mutex_unlock(&um->lock);
	return n;
}

void unwind_maps_stats(struct unwind_maps *um, size_t *files, size_t *rows)
{
	pthread_mutex_lock(&um->lock);
	*files = um->n;
	*rows = um->nrows;
	pthread_mutex_unlock(&um->lock);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int unwind_maps_attach(struct unwind_maps *um, int rows_fd, int objects_fd, int procs_fd,
		       uint32_t rows_cap, char *err, size_t errlen)
{
	int ret = -1;

	pthread_mutex_lock(&um->lock);
	/* Copies: the maps outlive the first program that made them. */
	um->rows_fd = fcntl(rows_fd, F_DUPFD_CLOEXEC, 0);
	um->objects_fd = fcntl(objects_fd, F_DUPFD_CLOEXEC, 0);
	um->procs_fd = fcntl(procs_fd, F_DUPFD_CLOEXEC, 0);
	um->rows_cap = rows_cap;
	if (um->rows_fd < 0 || um->objects_fd < 0 || um->procs_fd < 0)
		snprintf(err, errlen, "cannot keep the unwind tables' maps: %s", strerror(errno));
	else
		ret = sync_maps(um, err, errlen);
	pthread_mutex_unlock(&um->lock);
	return ret;
}

bool unwind_maps_attached(struct unwind_maps *um)
{
	bool yes;

	pthread_mutex_lock(&um->lock);
	yes = um->rows_fd >= 0;
	pthread_mutex_unlock(&um->lock);
	return yes;
}

void unwind_maps_fds(struct unwind_maps *um, int *rows_fd, int *objects_fd, int *procs_fd)
{
	pthread_mutex_lock(&um->lock);
	*rows_fd = um->rows_fd;
	*objects_fd = um->objects_fd;
	*procs_fd = um->procs_fd;
	pthread_mutex_unlock(&um->lock);
}

void unwind_maps_free(struct unwind_maps *um)
{
	for (size_t i = 0; i < um->n; i++)
		free(um->objs[i].path);
	free(um->objs);
	free(um->pending);
	close_fd(&um->rows_fd);
	close_fd(&um->objects_fd);
	close_fd(&um->procs_fd);
	pthread_mutex_destroy(&um->lock);
	unwind_maps_init(um);
}
