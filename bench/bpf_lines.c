// SPDX-License-Identifier: MIT
/*
 * bpf_lines PROG_ID: each line-info record of a loaded BPF program, as
 * "JIT_ADDRESS LINE SOURCE_TEXT" (the kernel address of its first JITed
 * instruction), so that perf samples in the program can be put on source
 * lines where perf cannot annotate BPF (bench/bpf_profile.sh).
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), nl, njl, lrs, jlrs;
	struct btf *btf;
	__u64 *jli;
	void *li;
	int fd;

	if (argc != 2)
		return 2;
	fd = bpf_prog_get_fd_by_id((__u32)atoi(argv[1]));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		perror("bpf_lines: the program's info");
		return 1;
	}
	nl = info.nr_line_info;
	njl = info.nr_jited_line_info;
	lrs = info.line_info_rec_size;
	jlrs = info.jited_line_info_rec_size;
	li = calloc(nl ? nl : 1, lrs);
	jli = calloc(njl ? njl : 1, jlrs);
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!li || !jli || !btf) {
		perror("bpf_lines: the program's BTF");
		return 1;
	}
	memset(&info, 0, sizeof(info));
	info.nr_line_info = nl;
	info.line_info_rec_size = lrs;
	info.line_info = (__u64)(unsigned long)li;
	info.nr_jited_line_info = njl;
	info.jited_line_info_rec_size = jlrs;
	info.jited_line_info = (__u64)(unsigned long)jli;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		perror("bpf_lines: the program's line info");
		return 1;
	}
	for (__u32 i = 0; i < nl && i < njl; i++) {
		const struct bpf_line_info *l = (const void *)((const char *)li + i * lrs);
		const char *s = btf__name_by_offset(btf, l->line_off);

		printf("%llx %u %s\n", (unsigned long long)jli[i], BPF_LINE_INFO_LINE_NUM(l->line_col),
		       s ? s : "");
	}
	return 0;
}
