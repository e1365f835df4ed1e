// SPDX-License-Identifier: MIT
#include "base/maps_file.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/target_file.h"

bool mapping_is_anon(const char *path)
{
	static const char *const prefixes[] = { "//anon", "/memfd:", "/dev/zero", "/SYSV" };

	if (path[0] != '/')
		return true;	/* "", [anon:NAME], [vdso], ... */
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

int proc_maps_each(pid_t pid, int (*fn)(const struct maps_line *l, void *arg), void *arg)
{
	char name[64], line[PATH_MAX + 256], path[PATH_MAX], file[PATH_MAX + 64];
	int ret = -2, map_files = -1;	/* -1: not asked yet */
	FILE *fp;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	fp = fopen(name, "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		struct maps_line l;

		ret = 0;
		path[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095[^\n]",
			   &l.start, &l.end, l.perms, &l.offset, path) < 4)
			continue;
		l.path = path;
		/* map_files probed once a reading: a heap snapshot's stopped
		 * process waits on this loop */
		l.file = NULL;
		if (!mapping_is_anon(path) && map_files < 0) {
			l.file = target_file(pid, l.start, l.end, path, file, sizeof(file));
			map_files = target_file_is_map_files(l.file);
		} else if (!mapping_is_anon(path)) {
			l.file = target_file_as(pid, l.start, l.end, path, map_files, file,
						sizeof(file));
		}
		ret = fn(&l, arg);
		if (ret)
			break;
	}
	fclose(fp);
	return ret;
}

bool maps_line_is_exec_file(const struct maps_line *l)
{
	return l->perms[2] == 'x' && !mapping_is_anon(l->path);
}
