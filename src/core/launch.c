// SPDX-License-Identifier: MIT
#include "core/launch.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void invoker_from_env(struct invoker *inv, bool as_root)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	const char *user = getenv("SUDO_USER");
	struct passwd *pw;

	memset(inv, 0, sizeof(*inv));
	if (as_root || geteuid() != 0 || !uid || !gid || !user)
		return;
	inv->uid = (uid_t)strtoul(uid, NULL, 10);
	inv->gid = (gid_t)strtoul(gid, NULL, 10);
	if (inv->uid == 0)
		return;
	snprintf(inv->user, sizeof(inv->user), "%s", user);
	pw = getpwuid(inv->uid);
	if (pw)
		snprintf(inv->home, sizeof(inv->home), "%s", pw->pw_dir);
	inv->drop = true;
}

static bool executable_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int launch_resolve(const char *cmd, char *out, size_t outlen)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int ret = ENOENT;

	if (strchr(cmd, '/')) {
		if (access(cmd, F_OK))
			return errno;
		if (!executable_file(cmd))
			return EACCES;
		snprintf(out, outlen, "%s", cmd);
		return 0;
	}
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, outlen, "%s/%s", *dir ? dir : ".", cmd);
		if (executable_file(out)) {
			ret = 0;
			break;
		}
	}
	free(copy);
	return ret;
}

static void drop_privileges(const struct invoker *inv)
{
	if (initgroups(inv->user, inv->gid) || setgid(inv->gid) || setuid(inv->uid)) {
		fail("cannot switch to user %s: %s\n", inv->user,
			strerror(errno));
		_exit(126);
	}
	setenv("USER", inv->user, 1);
	setenv("LOGNAME", inv->user, 1);
	if (inv->home[0])
		setenv("HOME", inv->home, 1);
}

static void child(const char *path, char *const argv[], const struct invoker *inv,
		  int go, int report)
{
	char c;
	int e;

	/* Die with the tracer until released; after that the program
	 * outlives a killed tracer. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go, &c, 1) != 1)
		_exit(127);
	prctl(PR_SET_PDEATHSIG, 0);
	close(go);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (inv->drop)
		drop_privileges(inv);
	execv(path, argv);
	e = errno;
	if (write(report, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int launch_fork(struct launch *l, const char *path, char *const argv[],
		const struct invoker *inv, char *err, size_t errlen)
{
	int go[2], report[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	l->pid = fork();
	if (l->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (l->pid == 0) {
		sigset_t none;

		/* The tracer blocks signals for its signalfd: unblock. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(report[0]);
		child(path, argv, inv, go[0], report[1]);
	}
	close(go[0]);
	close(report[1]);
	l->go_fd = go[1];
	l->err_fd = report[0];
	return 0;
}

int launch_release(struct launch *l, char *err, size_t errlen)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1) {
		snprintf(err, errlen, "cannot start the command: %s", strerror(errno));
		return -1;
	}
	close(l->go_fd);
	l->go_fd = -1;
	/* EOF on success: the pipe closed on exec. */
	do {
		n = read(l->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(e)) {
		snprintf(err, errlen, "cannot execute the command: %s", strerror(e));
		return -1;
	}
	return 0;
}

void launch_abort(struct launch *l)
{
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, NULL, 0);
		l->pid = 0;
	}
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
}
