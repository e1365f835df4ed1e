// SPDX-License-Identifier: MIT
#include "agent/exec_watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "alys_events.h"	/* the __u32 of the shared header */
#include "alys_exec.h"
#include "exec_watch.skel.h"

struct exec_watch {
	struct exec_watch_bpf *skel;
	struct ring_buffer *rb;
	exec_fn fn;
	void *ctx;
};

static int on_exec(void *arg, void *data, size_t len)
{
	struct exec_watch *xw = arg;
	const struct alys_exec *e = data;
	char comm[sizeof(e->comm) + 1];

	if (len < sizeof(*e))
		return 0;
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = 0;
	xw->fn(xw->ctx, (pid_t)e->pid, comm);
	return 0;
}

struct exec_watch *exec_watch_open(exec_fn fn, void *ctx, char *err, size_t errlen)
{
	struct exec_watch *xw = calloc(1, sizeof(*xw));

	if (!xw) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	xw->fn = fn;
	xw->ctx = ctx;
	xw->skel = exec_watch_bpf__open_and_load();
	if (!xw->skel || exec_watch_bpf__attach(xw->skel)) {
		snprintf(err, errlen, "cannot watch the host's execs (the sched_process_exec "
			 "tracepoint): %s; --all needs tracefs and CAP_BPF, CAP_PERFMON",
			 strerror(errno));
		exec_watch_close(xw);
		return NULL;
	}
	xw->rb = ring_buffer__new(bpf_map__fd(xw->skel->maps.execs), on_exec, xw, NULL);
	if (!xw->rb) {
		snprintf(err, errlen, "cannot read the exec events: %s", strerror(errno));
		exec_watch_close(xw);
		return NULL;
	}
	return xw;
}

int exec_watch_fd(const struct exec_watch *xw)
{
	return ring_buffer__epoll_fd(xw->rb);
}

void exec_watch_drain(struct exec_watch *xw)
{
	ring_buffer__consume(xw->rb);
}

uint64_t exec_watch_lost(const struct exec_watch *xw)
{
	return xw->skel->bss->lost;
}

void exec_watch_close(struct exec_watch *xw)
{
	if (!xw)
		return;
	ring_buffer__free(xw->rb);
	exec_watch_bpf__destroy(xw->skel);
	free(xw);
}
