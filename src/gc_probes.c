// SPDX-License-Identifier: MIT
#include "gc_probes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf_file.h"

static const struct {
	const char *name;
	unsigned args;
} gc_entry_points[ALYS_KIND_FREE + 1] = {
	[ALYS_KIND_MALLOC] = { "GC_malloc", ARG_RDI },
	[ALYS_KIND_MALLOC_ATOMIC] = { "GC_malloc_atomic", ARG_RDI },
	[ALYS_KIND_REALLOC] = { "GC_realloc", ARG_RDI | ARG_RSI },
	[ALYS_KIND_FREE] = { "GC_free", ARG_RDI },
};

static int place_probe(struct elf_file *ef, struct gc_func *f, char *err, size_t errlen)
{
	GElf_Xword size = 0;
	GElf_Addr vaddr;
	const uint8_t *code;
	size_t len;

	if (!elf_file_find_symbol(ef, f->name, &vaddr, &size))
		return 0;
	len = size && size < 64 ? size : 64;
	code = elf_file_bytes_at(ef, vaddr, len);
	if (!code) {
		snprintf(err, errlen, "%s: %s at 0x%lx is outside the file's loadable segments",
			 ef->path, f->name, (unsigned long)vaddr);
		return -1;
	}
	if (probe_place_find(code, len, vaddr, f->args, &f->place)) {
		snprintf(err, errlen, "%s: cannot disassemble %s", ef->path, f->name);
		return -1;
	}
	f->vaddr = vaddr;
	f->probe_vaddr = vaddr + f->place.offset;
	if (!elf_file_vaddr_to_offset(ef, f->probe_vaddr, &f->probe_file_off)) {
		snprintf(err, errlen, "%s: no segment maps %s", ef->path, f->name);
		return -1;
	}
	f->found = true;
	return 0;
}

int gc_probes_resolve(const char *path, struct gc_probes *gp, char *err, size_t errlen)
{
	struct elf_file ef;
	GElf_Addr v;
	int ret = 0;

	memset(gp, 0, sizeof(*gp));
	snprintf(gp->path, sizeof(gp->path), "%s", path);
	if (elf_file_open(&ef, path, err, errlen))
		return -1;
	for (int k = ALYS_KIND_MALLOC; k <= ALYS_KIND_FREE; k++) {
		gp->funcs[k].name = gc_entry_points[k].name;
		gp->funcs[k].args = gc_entry_points[k].args;
		if (place_probe(&ef, &gp->funcs[k], err, errlen)) {
			ret = -1;
			goto out;
		}
	}
	if (!gp->funcs[ALYS_KIND_MALLOC].found) {
		ret = 1;
		goto out;
	}
	if (elf_file_find_symbol(&ef, "GC_gc_no", &v, NULL))
		gp->gc_no_vaddr = v;
out:
	elf_file_close(&ef);
	return ret;
}

/* "\tlibgc.so.1 => /lib/x86_64-linux-gnu/libgc.so.1 (0x...)" */
static int find_libgc_path(const char *ldso, const char *exe, char *out, size_t outlen)
{
	int pfd[2], status, found = 0;
	char line[PATH_MAX + 256];
	FILE *fp;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execl(ldso, ldso, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	fp = fdopen(pfd[0], "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		char *arrow = strstr(line, " => ");
		char *path, *end;

		if (!arrow || !strstr(line, "libgc"))
			continue;
		path = arrow + 4;
		end = strstr(path, " (0x");
		if (end && path[0] == '/' && !found) {
			*end = 0;
			snprintf(out, outlen, "%s", path);
			found = 1;
		}
	}
	if (fp)
		fclose(fp);
	waitpid(pid, &status, 0);
	return found ? 0 : 1;
}

static int interpreter_of(const char *exe, char *out, size_t outlen)
{
	struct elf_file ef;
	char err[256];
	size_t n;
	int ret = 1;

	if (elf_file_open(&ef, exe, err, sizeof(err)))
		return -1;
	if (!elf_getphdrnum(ef.elf, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			size_t len;
			const char *raw = elf_rawfile(ef.elf, &len);

			if (!gelf_getphdr(ef.elf, i, &ph) || ph.p_type != PT_INTERP ||
			    !raw || ph.p_offset + ph.p_filesz > len || !ph.p_filesz)
				continue;
			snprintf(out, outlen, "%.*s", (int)ph.p_filesz - 1, raw + ph.p_offset);
			ret = 0;
		}
	}
	elf_file_close(&ef);
	return ret;
}

int gc_probes_for_program(const char *exe, struct gc_probes *gp, char *err, size_t errlen)
{
	char ldso[PATH_MAX], lib[PATH_MAX];
	int r = gc_probes_resolve(exe, gp, err, errlen);

	if (r <= 0) {
		gp->in_executable = r == 0;
		return r;
	}
	if (interpreter_of(exe, ldso, sizeof(ldso)) ||
	    find_libgc_path(ldso, exe, lib, sizeof(lib))) {
		snprintf(err, errlen,
			 "%s has no GC_malloc and does not load libgc: it is not a Crystal "
			 "program using the Boehm GC (a program built with -Dgc_none or "
			 "another collector cannot be traced)", exe);
		return 1;
	}
	r = gc_probes_resolve(lib, gp, err, errlen);
	if (r == 1)
		snprintf(err, errlen, "%s (loaded by %s) does not define GC_malloc", lib, exe);
	gp->in_executable = false;
	return r;
}

int gc_probes_for_process(pid_t pid, struct gc_probes *gp, char *err, size_t errlen)
{
	char path[PATH_MAX + 64], line[PATH_MAX + 256];
	int r;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	r = gc_probes_resolve(path, gp, err, errlen);
	if (r <= 0) {
		gp->in_executable = r == 0;
		return r;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fp = fopen(path, "re");
	if (!fp) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	r = 1;
	while (r == 1 && fgets(line, sizeof(line), fp)) {
		char *file = strchr(line, '/');

		if (!file || !strstr(line, " r-xp "))
			continue;
		file[strcspn(file, "\n")] = 0;
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, file);
		r = gc_probes_resolve(path, gp, err, errlen);
		if (r < 0)
			r = 1;
	}
	fclose(fp);
	if (r)
		snprintf(err, errlen,
			 "pid %d has no GC_malloc in its executable or its libraries: "
			 "it is not a Crystal program using the Boehm GC", pid);
	gp->in_executable = false;
	return r;
}
