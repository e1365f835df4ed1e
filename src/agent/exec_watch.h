/* SPDX-License-Identifier: MIT */
/* Every exec on the host, from the sched_process_exec tracepoint
 * (bpf/exec_watch.bpf.c): how --all finds programs started after it. */
#ifndef ALYS_EXEC_WATCH_H
#define ALYS_EXEC_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct exec_watch;

typedef void (*exec_fn)(void *ctx, pid_t pid, const char *comm);

/* NULL with the cause and fix in err. */
struct exec_watch *exec_watch_open(exec_fn fn, void *ctx, char *err, size_t errlen);
/* Readable when execs are waiting: then exec_watch_drain calls fn for each. */
int exec_watch_fd(const struct exec_watch *xw);
void exec_watch_drain(struct exec_watch *xw);
/* Execs that found the buffer full (their programs are found by the next
 * /proc scan instead). */
uint64_t exec_watch_lost(const struct exec_watch *xw);
void exec_watch_close(struct exec_watch *xw);

#endif
