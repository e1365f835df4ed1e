/* SPDX-License-Identifier: MIT */
/*
 * What a session traces: a process (running, or a command about to be
 * launched), its executable and the collector's probe points in it.
 */
#ifndef ALYS_TARGET_H
#define ALYS_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "gc/gc_probes.h"
#include "base/ldso_list.h"

struct target {
	pid_t pid;		/* 0 until a command is launched */
	char exe[PATH_MAX];
	struct gc_probes gp;
	struct lib_list libs;	/* not yet running: what the loader will map */
};

/*
 * A command to launch (found in PATH as execvp would). 0, or the exit
 * status alys-bpf should end with (127: not found, 126: cannot execute,
 * 1: no collector), with the cause and fix in err. A warning on stderr
 * unless quiet.
 */
int target_from_command(struct target *t, const char *cmd, bool quiet, char *err,
			size_t errlen);
/* A running process. Its libraries may not all be mapped yet (the agent
 * sees processes at exec): where /proc/PID/maps shows no collector, the
 * executable's own list (ld.so) is used. 0, or 1 with err. */
int target_from_pid(struct target *t, pid_t pid, char *err, size_t errlen);
void target_free(struct target *t);

#endif
