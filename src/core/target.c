// SPDX-License-Identifier: MIT
#include "core/target.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/launch.h"
#include "lib/util.h"

int target_from_command(struct target *t, const char *cmd, bool quiet, char *err, size_t errlen)
{
	char found[PATH_MAX];
	int e = launch_resolve(cmd, found, sizeof(found));

	if (e == ENOENT) {
		snprintf(err, errlen, "%s: command not found%s", cmd,
			 strchr(cmd, '/') ? "" : " in PATH");
		return 127;
	}
	if (e) {
		snprintf(err, errlen, "%s: cannot execute: %s", cmd, strerror(e));
		return 126;
	}
	if (!realpath(found, t->exe))
		snprintf(t->exe, sizeof(t->exe), "%s", found);
	if (ldso_list(t->exe, &t->libs) && !quiet)
		fail("warning: the dynamic loader could not list the "
			"libraries of %s\n", t->exe);
	return gc_probes_for_program(t->exe, &t->libs, &t->gp, err, errlen) ? 1 : 0;
}

int target_from_pid(struct target *t, pid_t pid, char *err, size_t errlen)
{
	char link[64], why[PATH_MAX + 256];
	ssize_t n;

	t->pid = pid;
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	if (kill(pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "no process with pid %d: check the pid (ps -e), it may "
			 "have exited", pid);
		return 1;
	}
	n = readlink(link, t->exe, sizeof(t->exe) - 1);
	if (n < 0) {
		snprintf(err, errlen, "cannot read %s: %s%s", link, strerror(errno),
			 errno == EACCES ? " (run alys-bpf as root)" : "");
		return 1;
	}
	t->exe[n] = 0;
	if (!gc_probes_for_process(pid, &t->gp, err, errlen))
		return 0;
	/* Just exec'd: the loader has not mapped libgc yet. The executable
	 * (through /proc, which reaches into its mount namespace) and what
	 * the loader will map. */
	snprintf(why, sizeof(why), "%s", err);
	if (ldso_list(link, &t->libs) ||
	    gc_probes_for_program(link, &t->libs, &t->gp, err, errlen)) {
		snprintf(err, errlen, "%s", why);
		return 1;
	}
	return 0;
}

void target_free(struct target *t)
{
	lib_list_free(&t->libs);
}
