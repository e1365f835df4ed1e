// SPDX-License-Identifier: MIT
/*
 * attach_empty BPF_OBJ BINARY SYMBOL RET -- COMMAND...: attach the empty
 * programs of alys-bpf's BPF object (empty_entry, and empty_return if RET
 * is 1) to SYMBOL's first instruction in BINARY, run COMMAND, detach.
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, entry, .func_name = argv[3]);
	LIBBPF_OPTS(bpf_uprobe_opts, ret, .func_name = argv[3], .retprobe = true);
	struct bpf_program *prog;
	struct bpf_object *obj;
	int status;
	pid_t pid;

	if (argc < 7)
		return 2;
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		perror("opening the BPF object");
		return 1;
	}
	/* The others need their loader's attach types (sessions, multi). */
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strncmp(bpf_program__name(prog), "empty_", 6));
	if (bpf_object__load(obj)) {
		perror("loading the BPF object");
		return 1;
	}
	if (!bpf_program__attach_uprobe_opts(bpf_object__find_program_by_name(obj, "empty_entry"),
					     -1, argv[2], 0, &entry) ||
	    (atoi(argv[4]) &&
	     !bpf_program__attach_uprobe_opts(bpf_object__find_program_by_name(obj, "empty_return"),
					      -1, argv[2], 0, &ret))) {
		perror("attaching");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execv(argv[6], argv + 6);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	bpf_object__close(obj);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
