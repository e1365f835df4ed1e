/* SPDX-License-Identifier: MIT */
/*
 * Uprobe sessions (Linux 6.13+): one BPF program at a call's entry and,
 * only if the entry asks for it, at its return. libbpf 1.1 predates them,
 * so the link is made with the bpf(2) syscall directly.
 */
#ifndef ALYS_SESSION_LINK_H
#define ALYS_SESSION_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* enum bpf_attach_type values and a flag in the kernel's UAPI. */
#define ALYS_BPF_TRACE_UPROBE_MULTI 48
#define ALYS_BPF_TRACE_UPROBE_SESSION 57
#define ALYS_BPF_F_UPROBE_MULTI_RETURN 1

/* A uprobe_multi link (Linux 6.6+; attach_type one of the above, flags 0 or
 * ALYS_BPF_F_UPROBE_MULTI_RETURN) of prog_fd at one file offset of path,
 * for the process pid, with a cookie. Unlike a perf uprobe, making or
 * closing one takes no host-wide mutex across RCU grace periods (the trace
 * events' event_mutex): with nine sessions' duty windows, perf uprobes'
 * attaches queued there for 0.5 s at the median. Returns the link fd, or
 * -errno. */
int uprobe_multi_link_create(int prog_fd, uint32_t attach_type, uint32_t flags,
			     const char *path, uint64_t offset, uint64_t cookie, pid_t pid);
/* Whether this kernel makes uprobe_multi links (probed once). */
bool uprobe_multi_supported(void);

/* A uprobe-session link of prog_fd at one file offset of path, for the
 * process pid, with a cookie the program reads (bpf_get_attach_cookie).
 * Returns the link fd, or -errno. */
int session_link_create(int prog_fd, const char *path, uint64_t offset, uint64_t cookie,
			pid_t pid);

#endif
