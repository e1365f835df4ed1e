// SPDX-License-Identifier: MIT
/*
 * Runs a program the way a container runtime does, for the container tests:
 * new mount and pid namespaces, ROOT as its root file system with its own
 * /proc, the program as pid 1 inside.
 *
 *   container [--chroot] [--host-pid] [--bind SRC DST]... [--cgroup DIR]...
 *             [--pidfile F] ROOT PROG [ARG...]
 *
 * Default: ROOT bind-mounted and pivot_root'ed to / (Docker, containerd);
 * --chroot: chroot(ROOT) instead, the host's mounts left as they are.
 * --host-pid: the host's pid namespace (a DaemonSet's hostPID), its /proc
 * mounted inside. --bind: SRC (a host directory) at ROOT/DST, recursively
 * (e.g. /sys). Each --cgroup DIR (a cgroup directory) gets the program
 * before it runs.
 * --pidfile F: the program's host pid, written once it is in its cgroups.
 * Waits for the program; SIGTERM and SIGINT are passed on. Exits with its
 * status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;
static int own_pid_ns;

static void die(const char *what)
{
	fprintf(stderr, "container: %s: %s\n", what, strerror(errno));
	exit(125);
}

static void pass_on(int sig)
{
	if (child > 0)
		/* pid 1 of a namespace ignores what it does not handle */
		kill(child, own_pid_ns && sig == SIGTERM ? SIGKILL : sig);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		die(path);
	close(fd);
}

static const char *binds[8][2];
static int nbinds;

static void enter_root(const char *root, int chroot_only)
{
	char proc[4096];

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("making / private");
	if (!chroot_only && mount(root, root, NULL, MS_BIND | MS_REC, NULL))
		die("bind-mounting the root");
	for (int b = 0; b < nbinds; b++) {
		char dst[4096];

		snprintf(dst, sizeof(dst), "%s/%s", root, binds[b][1]);
		mkdir(dst, 0755);
		if (mount(binds[b][0], dst, NULL, MS_BIND | MS_REC, NULL))
			die(binds[b][0]);
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	mkdir(proc, 0555);
	if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		die("mounting /proc");
	if (chdir(root))
		die("chdir to the root");
	if (chroot_only) {
		if (chroot("."))
			die("chroot");
	} else {
		/* the old root stacked under the new, then detached */
		if (syscall(SYS_pivot_root, ".", "."))
			die("pivot_root");
		if (umount2(".", MNT_DETACH))
			die("detaching the old root");
	}
	if (chdir("/"))
		die("chdir /");
}

int main(int argc, char **argv)
{
	const char *cgroups[8], *pidfile = NULL;
	int ncg = 0, chroot_only = 0, host_pid = 0, go[2], status;
	char buf[32];
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--chroot"))
			chroot_only = 1;
		else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc && ncg < 8)
			cgroups[ncg++] = argv[++i];
		else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc)
			pidfile = argv[++i];
		else if (!strcmp(argv[i], "--host-pid"))
			host_pid = 1;
		else if (!strcmp(argv[i], "--bind") && i + 2 < argc && nbinds < 8) {
			binds[nbinds][0] = argv[++i];
			binds[nbinds++][1] = argv[++i];
		}
		else
			break;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: container [--chroot] [--host-pid] [--bind SRC DST]... "
			"[--cgroup DIR]... [--pidfile F] ROOT PROG [ARG...]\n");
		return 125;
	}
	if (pipe2(go, O_CLOEXEC))
		die("pipe");
	if (unshare(CLONE_NEWNS | (host_pid ? 0 : CLONE_NEWPID)))
		die("unshare");
	own_pid_ns = !host_pid;
	child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		close(go[1]);
		if (read(go[0], buf, 1) != 1)	/* in its cgroups first */
			_exit(125);
		enter_root(argv[i], chroot_only);
		execv(argv[i + 1], argv + i + 1);
		die(argv[i + 1]);
	}
	close(go[0]);
	snprintf(buf, sizeof(buf), "%d\n", child);
	for (int c = 0; c < ncg; c++) {
		char procs[4096];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroups[c]);
		write_file(procs, buf);
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "we");

		if (!f || fputs(buf, f) < 0 || fclose(f))
			die(pidfile);
	}
	signal(SIGTERM, pass_on);
	signal(SIGINT, pass_on);
	if (write(go[1], "g", 1) != 1)
		die("starting the program");
	close(go[1]);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
