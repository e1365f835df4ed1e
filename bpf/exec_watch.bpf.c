// SPDX-License-Identifier: GPL-2.0
/*
 * alys-bpf --all: every exec on the host, so that the agent can look at
 * each new program (a Crystal one gets a session) before it has run long.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "alys_exec.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);	/* ~10K execs between two reads */
} execs SEC(".maps");

__u64 lost;	/* execs that found the buffer full */

SEC("tp/sched/sched_process_exec")
int on_exec(void *ctx)
{
	struct alys_exec *e = bpf_ringbuf_reserve(&execs, sizeof(*e), 0);

	(void)ctx;
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}
