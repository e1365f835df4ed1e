// SPDX-License-Identifier: MIT
#include "base/ldso_list.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/elf_file.h"

static int interpreter_of(const char *exe, char *out, size_t outlen)
{
	struct elf_file ef;
	char err[256];
	const char *raw;
	GElf_Phdr ph;
	size_t len;
	int ret = 1;

	if (elf_file_open(&ef, exe, err, sizeof(err)))
		return -1;
	raw = elf_rawfile(ef.elf, &len);
	if (raw && elf_file_segment(&ef, PT_INTERP, &ph) && ph.p_filesz &&
	    ph.p_offset + ph.p_filesz <= len) {
		snprintf(out, outlen, "%.*s", (int)ph.p_filesz - 1, raw + ph.p_offset);
		ret = 0;
	}
	elf_file_close(&ef);
	return ret;
}

static int push(struct lib_list *l, const char *path)
{
	char **v = realloc(l->paths, (l->n + 1) * sizeof(*v));

	if (!v)
		return -1;
	l->paths = v;
	l->paths[l->n] = strdup(path);
	if (!l->paths[l->n])
		return -1;
	l->n++;
	return 0;
}

/* Lines: "\tlibgc.so.1 => /lib/x86_64-linux-gnu/libgc.so.1 (0x...)" and
 * "\t/lib64/ld-linux-x86-64.so.2 (0x...)". */
static void parse_line(struct lib_list *l, char *line)
{
	char *arrow = strstr(line, " => ");
	char *path = arrow ? arrow + 4 : line + strspn(line, " \t");
	char *end = strstr(path, " (0x");

	if (!end || path[0] != '/')
		return;
	*end = 0;
	push(l, path);
}

int ldso_list(const char *exe, struct lib_list *out)
{
	char ldso[PATH_MAX], line[PATH_MAX + 256];
	int pfd[2], status;
	FILE *fp;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (interpreter_of(exe, ldso, sizeof(ldso)))
		return 0;	/* static: nothing to load */
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execl(ldso, ldso, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	fp = fdopen(pfd[0], "r");
	while (fp && fgets(line, sizeof(line), fp))
		parse_line(out, line);
	if (fp)
		fclose(fp);
	else
		close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void lib_list_free(struct lib_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
	memset(l, 0, sizeof(*l));
}
