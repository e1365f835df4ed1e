/* SPDX-License-Identifier: MIT */
/* What bpf/exec_watch.bpf.c reports for each exec (agent/exec_watch.c). */
#ifndef ALYS_EXEC_H
#define ALYS_EXEC_H

struct alys_exec {
	__u32 pid;		/* the process (thread group) that exec'd */
	char comm[16];		/* its new name, as /proc/PID/comm */
};

#endif
