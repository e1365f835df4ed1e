// SPDX-License-Identifier: MIT
#include "lib/target_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char deleted[] = " (deleted)";

size_t target_file_name_len(const char *path)
{
	size_t n = strlen(path), d = sizeof(deleted) - 1;

	return n > d && !strcmp(path + n - d, deleted) ? n - d : n;
}

const char *target_file_as(pid_t pid, uint64_t start, uint64_t end, const char *path,
			   bool map_files, char *buf, size_t len)
{
	if (map_files)
		snprintf(buf, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	else
		snprintf(buf, len, "/proc/%d/root%.*s", pid, (int)target_file_name_len(path),
			 path);
	return buf;
}

const char *target_file(pid_t pid, uint64_t start, uint64_t end, const char *path,
			char *buf, size_t len)
{
	/* map_files needs CAP_SYS_ADMIN in the target's user namespace */
	if (!access(target_file_as(pid, start, end, path, true, buf, len), R_OK))
		return buf;
	return target_file_as(pid, start, end, path, false, buf, len);
}

bool target_file_is_map_files(const char *file)
{
	return strstr(file, "/map_files/") != NULL;
}

const char *build_id_cache_path(const char *dir, const uint8_t *id, size_t len, char *buf,
				size_t buflen)
{
	char hex[2 * 64 + 1];

	if (len < 2 || len > 64)
		return NULL;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(buf, buflen, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	return buf;
}
