/* SPDX-License-Identifier: MIT */
/*
 * Uprobe sessions (Linux 6.13+): one BPF program at a call's entry and,
 * only if the entry asks for it, at its return. libbpf 1.1 predates them,
 * so the link is made with the bpf(2) syscall directly.
 */
#ifndef ALYS_SESSION_LINK_H
#define ALYS_SESSION_LINK_H

#include <stdint.h>
#include <sys/types.h>

/* enum bpf_attach_type value in the kernel's UAPI. */
#define ALYS_BPF_TRACE_UPROBE_SESSION 57

/* A uprobe-session link of prog_fd at one file offset of path, for the
 * process pid, with a cookie the program reads (bpf_get_attach_cookie).
 * Returns the link fd, or -errno. */
int session_link_create(int prog_fd, const char *path, uint64_t offset, uint64_t cookie,
			pid_t pid);

#endif
