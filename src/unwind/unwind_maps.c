// SPDX-License-Identifier: MIT
#include "unwind/unwind_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "alys_events.h"
#include "base/clock_ns.h"
#include "lib/elf_file.h"
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

/* Rows go into the array in batches: one syscall per 64k rows. */
static int upload_rows(struct unwind_maps *um, char *err, size_t errlen)
{
	const uint32_t chunk = 65536;

	if (um->nrows > um->rows_cap) {
		snprintf(err, errlen, "unwind tables need %zu rows, more than the %u reserved: "
			 "stacks through the newest libraries will stop there", um->nrows,
			 um->rows_cap);
		return -1;
	}
	while (um->rows_uploaded < um->nrows) {
		uint32_t n = um->nrows - um->rows_uploaded;
		uint32_t *keys;

		if (n > chunk)
			n = chunk;
		keys = malloc(n * sizeof(*keys));
		if (!keys)
			return -1;
		for (uint32_t i = 0; i < n; i++)
			keys[i] = um->rows_uploaded + i;
		if (bpf_map_update_batch(um->rows_fd, keys, um->rows + um->rows_uploaded, &n, NULL)) {
			snprintf(err, errlen, "cannot load unwind rows: %s", strerror(errno));
			free(keys);
			return -1;
		}
		free(keys);
		um->rows_uploaded += n;
	}
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
	if (um->nrows + n > um->rows_alloc) {
		size_t cap = um->rows_alloc ? um->rows_alloc : 1 << 16;
		struct alys_unwind_row *v;

		while (cap < um->nrows + n)
			cap *= 2;
		v = realloc(um->rows, cap * sizeof(*v));
		if (!v)
			return -1;
		um->rows = v;
		um->rows_alloc = cap;
	}
	memcpy(um->rows + um->nrows, rows, n * sizeof(*rows));
	um->nrows += n;
	return 0;
}

static int add_locked(struct unwind_maps *um, const char *path, char *err, size_t errlen)
{
	struct unwind_object *o, *same = NULL;
	struct alys_unwind_table table;
	struct elf_file ef;
	struct stat st;
	uint8_t id[20];
	size_t idlen;
	uint64_t t0;
	int ret = 0;

	if (stat(path, &st)) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < um->n; i++)
		if (um->objs[i].ino == st.st_ino &&
		    um->objs[i].dev == (major(st.st_dev) << 20 | minor(st.st_dev)))
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
	o->dev = major(st.st_dev) << 20 | minor(st.st_dev);
	memcpy(o->build_id, id, idlen);
	o->build_id_len = idlen;
	o->vaddr_minus_offset = exec_vaddr_minus_offset(&ef);
	elf_file_close(&ef);
	if (same) {
		o->row_first = same->row_first;
		o->row_count = same->row_count;
		return sync_maps(um, err, errlen);
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (alys_unwind_table_build(path, &table, err, errlen)) {
		um->failures++;
		um->n--;
		free(o->path);
		return -1;
	}
	um->build_ns += clock_ns(CLOCK_MONOTONIC) - t0;
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

int unwind_maps_add(struct unwind_maps *um, const char *path, char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&um->lock);
	ret = add_locked(um, path, err, errlen);
	pthread_mutex_unlock(&um->lock);
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

void unwind_maps_stats(struct unwind_maps *um, size_t *files, size_t *rows, uint64_t *build_ns)
{
	pthread_mutex_lock(&um->lock);
	*files = um->n;
	*rows = um->nrows;
	*build_ns = um->build_ns;
	pthread_mutex_unlock(&um->lock);
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
	free(um->rows);
	if (um->rows_fd >= 0)
		close(um->rows_fd);
	if (um->objects_fd >= 0)
		close(um->objects_fd);
	if (um->procs_fd >= 0)
		close(um->procs_fd);
	pthread_mutex_destroy(&um->lock);
	unwind_maps_init(um);
}
