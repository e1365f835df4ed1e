/* SPDX-License-Identifier: MIT */
/*
 * Which container a process runs in, as users filter by it in Pyroscope,
 * Parca and Grafana: the container id and pod uid that the runtimes put
 * into its cgroup path (Docker, containerd, CRI-O, Podman, Kubernetes'
 * kubepods), the cgroup path itself, and its pid inside its own pid
 * namespace. A process in no container has none of them.
 */
#ifndef ALYS_CONTAINER_INFO_H
#define ALYS_CONTAINER_INFO_H

#include <stdbool.h>
#include <sys/types.h>

struct container_info {
	char id[65];		/* 64 hex digits, "" if none */
	char pod_uid[37];	/* Kubernetes pod uid, "" if none */
	char cgroup[1024];	/* the cgroup path naming the container, or (no
				 * id) the unified one of a process in another
				 * pid namespace; "" if neither */
	pid_t ns_pid;		/* pid in its own pid namespace; 0: ours */
};

/* Reads /proc/PID/cgroup and /proc/PID/status; false when the process is
 * in no container (ci then all empty). */
bool container_info_read(pid_t pid, struct container_info *ci);
/* The same from the text of a cgroup file and an NSpid line's values
 * ("4312 1"), for tests. */
bool container_info_parse(const char *cgroup, const char *nspid, struct container_info *ci);

#endif
