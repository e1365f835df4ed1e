// SPDX-License-Identifier: MIT
#include "core/session_link.h"

#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

/* union bpf_attr's link_create with the uprobe_multi member, laid out as in
 * Linux 6.6+ include/uapi/linux/bpf.h (Debian 12's headers lack it). */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
};

int uprobe_multi_link_create(int prog_fd, uint32_t attach_type, uint32_t flags,
			     const char *path, uint64_t offset, uint64_t cookie, pid_t pid)
{
	union {
		struct link_create_uprobe_multi lc;
		char bytes[sizeof(union bpf_attr) > 128 ? sizeof(union bpf_attr) : 128];
	} attr;
	unsigned long offsets[1] = { offset };
	uint64_t cookies[1] = { cookie };
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.lc.prog_fd = prog_fd;
	attr.lc.attach_type = attach_type;
	attr.lc.multi_flags = flags;
	attr.lc.path = (uint64_t)(uintptr_t)path;
	attr.lc.offsets = (uint64_t)(uintptr_t)offsets;
	attr.lc.cookies = (uint64_t)(uintptr_t)cookies;
	attr.lc.cnt = 1;
	attr.lc.pid = (uint32_t)pid;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int session_link_create(int prog_fd, const char *path, uint64_t offset, uint64_t cookie,
			pid_t pid)
{
	return uprobe_multi_link_create(prog_fd, ALYS_BPF_TRACE_UPROBE_SESSION, 0, path, offset,
					cookie, pid);
}

static bool multi_supported;

/* As libbpf's later versions probe it: a kernel with uprobe_multi links
 * refuses the path "/" (not a regular file) with EBADF, one without them
 * the attach type with EINVAL. */
static void probe_multi(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "alys_probe_multi", "GPL", insns, 2, &opts);
	int link;

	if (prog < 0)
		return;
	link = uprobe_multi_link_create(prog, ALYS_BPF_TRACE_UPROBE_MULTI, 0, "/", 0, 0, 0);
	multi_supported = link == -EBADF;
	if (link >= 0)
		close(link);
	close(prog);
}

bool uprobe_multi_supported(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, probe_multi);
	return multi_supported;
}
