// SPDX-License-Identifier: MIT
#include "core/proc_maps.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alys_format.h"
#include "lib/elf_file.h"
#include "lib/util.h"
#include "lib/target_file.h"

void proc_maps_init(struct proc_maps *pm, pid_t pid)
{
	memset(pm, 0, sizeof(*pm));
	pm->pid = pid;
}

static bool known(const struct proc_maps *pm, uint64_t start, uint64_t end,
		  uint64_t offset, const char *path)
{
	for (size_t i = 0; i < pm->n; i++) {
		const struct mapping *m = &pm->v[i];

		if (m->start == start && m->end == end && m->offset == offset &&
		    !strcmp(m->path, path))
			return true;
	}
	return false;
}

static size_t build_id_of(pid_t pid, uint64_t start, uint64_t end,
			  const char *path, uint8_t *id, size_t idlen)
{
	char file[PATH_MAX + 64], err[256];
	struct elf_file ef;
	size_t n;

	target_file(pid, start, end, path, file, sizeof(file));
	if (elf_file_open(&ef, file, err, sizeof(err)))
		return 0;
	n = elf_file_build_id(&ef, id, idlen);
	elf_file_close(&ef);
	return n;
}

int proc_maps_add(struct proc_maps *pm, struct trace_writer *w, uint64_t start,
		  uint64_t end, uint64_t offset, const char *path,
		  const uint8_t *build_id, size_t build_id_len)
{
	uint8_t id[64];
	struct mapping *m;
	bool anon = mapping_is_anon(path);

	if (!path[0])
		path = "//anon";
	if (known(pm, start, end, offset, path))
		return 0;
	if (pm->n == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 32;
		struct mapping *v = realloc(pm->v, cap * sizeof(*v));

		if (!v)
			return -1;
		pm->v = v;
		pm->cap = cap;
	}
	m = &pm->v[pm->n];
	m->path = strdup(path);
	if (!m->path)
		return -1;
	m->start = start;
	m->end = end;
	m->offset = offset;
	pm->n++;
	if (anon) {
		build_id_len = 0;
	} else if (!build_id) {
		build_id_len = build_id_of(pm->pid, start, end, path, id, sizeof(id));
		build_id = id;
	}
	trace_writer_mapping(w, start, end, offset, path, build_id, build_id_len,
			     anon ? ALYS_MAPPING_ANON : 0);
	if (!anon && pm->keep_dir) {
		char err[2 * PATH_MAX + 256];
		enum file_keep_result r = file_keep(pm->keep_dir, pm->pid, start, end, path,
						    build_id, build_id_len, pm->keep_all,
						    &pm->kept, err,
						    sizeof(err));

		if (r == FILE_KEEP_NO_BUILD_ID || r == FILE_KEEP_FAILED)
			say_unless(pm->keep_quiet, "warning: %s; alys_converter will leave its frames "
				   "as [FILE+0xOFFSET]\n", err);
	}
	return 1;
}

struct refresh {
	struct proc_maps *pm;
	struct trace_writer *w;
	int added;
};

static int refresh_one(const struct maps_line *l, void *arg)
{
	struct refresh *r = arg;

	if (l->perms[2] == 'x' &&
	    proc_maps_add(r->pm, r->w, l->start, l->end, l->offset, l->path, NULL, 0) > 0)
		r->added++;
	return 0;
}

int proc_maps_refresh(struct proc_maps *pm, struct trace_writer *w)
{
	struct refresh r = { pm, w, 0 };

	/* An empty maps file is a zombie: its mappings are gone. */
	return proc_maps_each(pm->pid, refresh_one, &r) < 0 ? -1 : r.added;
}

void proc_maps_keep_files(struct proc_maps *pm, const char *dir, const char *output,
			  bool quiet)
{
	size_t n = (dir ? strlen(dir) : strlen(output) + strlen(KEPT_DIR_SUFFIX)) + 1;

	free(pm->keep_dir);
	pm->keep_dir = malloc(n);
	if (!pm->keep_dir)
		return;
	if (dir)
		snprintf(pm->keep_dir, n, "%s", dir);
	else
		snprintf(pm->keep_dir, n, "%s" KEPT_DIR_SUFFIX, output);
	pm->keep_all = file_keep_other_root(pm->pid);
	pm->keep_quiet = quiet;
}

void proc_maps_forget(struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		free(pm->v[i].path);
	pm->n = 0;
}

bool proc_maps_covers(const struct proc_maps *pm, uint64_t ip)
{
	for (size_t i = 0; i < pm->n; i++)
		if (ip >= pm->v[i].start && ip < pm->v[i].end)
			return true;
	return false;
}

void proc_maps_free(struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		free(pm->v[i].path);
	free(pm->v);
	free(pm->keep_dir);
	memset(pm, 0, sizeof(*pm));
}
