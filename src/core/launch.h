/* SPDX-License-Identifier: MIT */
/*
 * Starting the traced command: forked first and held before execve until
 * the probes are attached, so no allocation is missed. Under sudo it runs as
 * the invoking user.
 */
#ifndef ALYS_LAUNCH_H
#define ALYS_LAUNCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct invoker {
	bool drop;		/* run the command as uid/gid, not root */
	uid_t uid;
	gid_t gid;
	char user[64];
	char home[PATH_MAX];
};

/* The user behind sudo (SUDO_UID...), unless as_root or not under sudo. */
void invoker_from_env(struct invoker *inv, bool as_root);

/* PATH lookup as execvp does it; 0 on success, else errno. */
int launch_resolve(const char *cmd, char *out, size_t outlen);

struct launch {
	pid_t pid;
	int go_fd;		/* write a byte: the child execs */
	int err_fd;		/* the child reports a failed execve here */
};

int launch_fork(struct launch *l, const char *path, char *const argv[],
		const struct invoker *inv, char *err, size_t errlen);
/* Lets the child exec; returns 0, or -1 with err naming why exec failed. */
int launch_release(struct launch *l, char *err, size_t errlen);
/* Kills a child that was never released. */
void launch_abort(struct launch *l);

#endif
