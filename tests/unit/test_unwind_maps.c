// SPDX-License-Identifier: MIT
/*
 * unwind_maps_add_all, the tables of many files built on threads, against
 * the same one file at a time: the same objects in the same
 * order, the same rows, the same failures. No BPF: the maps are not
 * attached, so nothing is uploaded.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_check.h"
#include "unwind/unwind_maps.h"

#define MAX_FAILED 8

struct failures {
	int n;
	char path[MAX_FAILED][256];
	char err[MAX_FAILED][512];
};

static void record_failure(void *arg, const char *path, const char *err)
{
	struct failures *f = arg;

	if (f->n < MAX_FAILED) {
		snprintf(f->path[f->n], sizeof(f->path[0]), "%s", path);
		snprintf(f->err[f->n], sizeof(f->err[0]), "%s", err);
	}
	f->n++;
}

static bool copy_file(const char *from, const char *to)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd) == 0;
}

int main(void)
{
	char dir[] = "/tmp/alys-unwind-maps.XXXXXX", copy[64], text[64], msg[512];
	const char *libgc = "/lib/x86_64-linux-gnu/libgc.so.1";
	struct unwind_maps one, all;
	struct failures f = { 0 };
	FILE *fp;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	/* a copy of libgc: another inode, the same build id */
	snprintf(copy, sizeof(copy), "%s/libgc-copy.so", dir);
	snprintf(text, sizeof(text), "%s/not-elf", dir);
	check("libgc copied", copy_file(libgc, copy));
	fp = fopen(text, "w");
	check("text file written", fp && fputs("not an ELF file\n", fp) >= 0);
	if (fp)
		fclose(fp);

	const char *paths[] = {
		"/proc/self/exe",			/* this test */
		libgc,
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/nonexistent/libmissing.so",
		"/lib/x86_64-linux-gnu/libelf.so.1",
		text,
		libgc,					/* the same inode again */
		copy,
		"/lib/x86_64-linux-gnu/libdw.so.1",
		"/lib/x86_64-linux-gnu/libm.so.6",
	};
	const size_t n = sizeof(paths) / sizeof(paths[0]);
	int one_failed = 0;

	unwind_maps_init(&one);
	for (size_t i = 0; i < n; i++)
		one_failed += unwind_maps_add_all(&one, &paths[i], 1, NULL, NULL) != 0;
	unwind_maps_init(&all);
	rc = unwind_maps_add_all(&all, paths, n, record_failure, &f);

	snprintf(msg, sizeof(msg), "one at a time: 2 failures (%d), 7 objects (%zu: 10 paths, one twice), rows (%zu)",
		 one_failed, one.n, one.nrows);
	check(msg, one_failed == 2 && one.n == 7 && one.nrows > 1000);
	snprintf(msg, sizeof(msg), "all at once: -1 (%d), 2 failures (%d), %zu objects (%zu)", rc,
		 f.n, one.n, all.n);
	check(msg, rc == -1 && f.n == 2 && all.n == one.n);
	check("the missing file failed, its cause named",
	      f.n >= 1 && !strcmp(f.path[0], "/nonexistent/libmissing.so") &&
		      strstr(f.err[0], "No such file"));
	check("the text file failed, as not an ELF file",
	      f.n >= 2 && !strcmp(f.path[1], text) && strstr(f.err[1], "not an ELF file"));

	bool same = all.n == one.n && all.nrows == one.nrows;

	for (size_t i = 0; same && i < one.n; i++)
		same = !strcmp(all.objs[i].path, one.objs[i].path) &&
		       all.objs[i].row_first == one.objs[i].row_first &&
		       all.objs[i].row_count == one.objs[i].row_count &&
		       all.objs[i].ino == one.objs[i].ino;
	check("the same objects in the same order, each with the same rows", same);
	check("the same rows, byte for byte",
	      same && all.npending == all.nrows && one.npending == one.nrows &&
		      !memcmp(all.pending, one.pending, one.nrows * sizeof(*one.pending)));

	/* libgc's copy shares libgc's rows (one build id) */
	const struct unwind_object *gc = NULL, *gc_copy = NULL;

	for (size_t i = 0; i < all.n; i++) {
		if (!strcmp(all.objs[i].path, libgc))
			gc = &all.objs[i];
		if (!strcmp(all.objs[i].path, copy))
			gc_copy = &all.objs[i];
	}
	check("libgc's copy shares its rows",
	      gc && gc_copy && gc->row_count > 100 && gc_copy->row_first == gc->row_first &&
		      gc_copy->row_count == gc->row_count);

	/* known files: nothing built again, nothing added */
	size_t rows_before = all.nrows, objs_before = all.n;

	f.n = 0;
	rc = unwind_maps_add_all(&all, paths, 3, record_failure, &f);
	check("known files again: no object, no row, no failure",
	      rc == 0 && f.n == 0 && all.n == objs_before && all.nrows == rows_before);

	unwind_maps_free(&one);
	unwind_maps_free(&all);
	unlink(copy);
	unlink(text);
	rmdir(dir);
	return unit_summary();
}
