// SPDX-License-Identifier: MIT
#include "core/file_keep.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock_ns.h"
#include "lib/elf_file.h"
#include "lib/target_file.h"

/* Whether this machine's file at path has build id id. */
static bool same_here(const char *path, const uint8_t *id, size_t idlen)
{
	char name[PATH_MAX], msg[256];
	size_t n = target_file_name_len(path), have_len;
	uint8_t have[64];
	struct elf_file ef;

	if (n >= sizeof(name) || (n != strlen(path)))
		return false;	/* " (deleted)": not at its path any more */
	memcpy(name, path, n);
	name[n] = 0;
	if (elf_file_open(&ef, name, msg, sizeof(msg)))
		return false;
	have_len = elf_file_build_id(&ef, have, sizeof(have));
	elf_file_close(&ef);
	return have_len == idlen && !memcmp(have, id, idlen);
}

static uid_t owner_uid = (uid_t)-1;
static gid_t owner_gid = (gid_t)-1;

void file_keep_owner(uid_t uid, gid_t gid)
{
	owner_uid = uid;
	owner_gid = gid;
}

static void own(const char *path)
{
	if (owner_uid != (uid_t)-1 && chown(path, owner_uid, owner_gid)) {
		/* root-owned: still readable by the converter */
	}
}

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (!mkdir(path, 0755)) {
			own(path);
		} else if (errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

static int copy_fd(int in, int out, uint64_t *bytes)
{
	char buf[1 << 16];
	ssize_t n;

	while ((n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0)) > 0)
		*bytes += (uint64_t)n;
	if (!n)
		return 0;
	if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0)
				return -1;
			off += w;
		}
		*bytes += (uint64_t)n;
	}
	return n < 0 ? -1 : 0;
}

enum file_keep_result file_keep(const char *dir, pid_t pid, uint64_t start, uint64_t end,
				const char *path, const uint8_t *id, size_t idlen, bool always,
				struct file_keep_stats *st, char *err, size_t errlen)
{
	char dest[PATH_MAX], tmp[PATH_MAX + 32], src[PATH_MAX + 64];
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), bytes = 0;
	int in, out, r;

	if (!always && idlen && same_here(path, id, idlen))
		return FILE_KEEP_NOT_NEEDED;
	if (!idlen) {
		snprintf(err, errlen, "%s has no build id: it cannot be kept for the converter, "
			 "which will name its frames only from a file of that name on its machine",
			 path);
		return FILE_KEEP_NO_BUILD_ID;
	}
	if (!build_id_cache_path(dir, id, idlen, dest, sizeof(dest))) {
		snprintf(err, errlen, "%s: a build id of %zu bytes", path, idlen);
		return FILE_KEEP_NO_BUILD_ID;
	}
	if (!access(dest, F_OK))
		return FILE_KEEP_HAD;
	target_file(pid, start, end, path, src, sizeof(src));
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		snprintf(err, errlen, "cannot open %s as mapped (%s): %s", path, src,
			 strerror(errno));
		return FILE_KEEP_FAILED;
	}
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", dest, (int)getpid());
	if (mkdirs(tmp) || (out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
		close(in);
		return FILE_KEEP_FAILED;
	}
	r = copy_fd(in, out, &bytes);
	if (close(out))
		r = -1;
	if (r || rename(tmp, dest)) {
		snprintf(err, errlen, "cannot copy %s to %s: %s", path, dest, strerror(errno));
		unlink(tmp);
		close(in);
		return FILE_KEEP_FAILED;
	}
	close(in);
	own(dest);
	st->files++;
	st->bytes += bytes;
	st->ns += clock_ns(CLOCK_MONOTONIC) - t0;
	return FILE_KEEP_COPIED;
}

bool file_keep_other_root(pid_t pid)
{
	struct stat ours, theirs;
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root/", pid);
	return !stat("/", &ours) && !stat(root, &theirs) &&
	       (ours.st_dev != theirs.st_dev || ours.st_ino != theirs.st_ino);
}
