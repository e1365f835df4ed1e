// SPDX-License-Identifier: MIT
/* The container identity read from cgroup files as the runtimes write them. */
#include <string.h>

#include "core/container_info.h"
#include "unit_check.h"

#define ID "3f4c2b1a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29180716253443526170ab"

int main(void)
{
	struct container_info ci;

	check("docker (cgroup v1): found",
	      container_info_parse("12:pids:/docker/" ID "\n0::/docker/" ID "\n", "\t4312\t1", &ci));
	check("docker (cgroup v1): id", !strcmp(ci.id, ID));
	check("docker (cgroup v1): cgroup path", !strcmp(ci.cgroup, "/docker/" ID));
	check("docker (cgroup v1): pid inside", ci.ns_pid == 1);
	check("docker: no pod", !ci.pod_uid[0]);

	check("systemd docker scope (cgroup v2)",
	      container_info_parse("0::/system.slice/docker-" ID ".scope\n", "\t77", &ci) &&
	      !strcmp(ci.id, ID) && !strcmp(ci.cgroup, "/system.slice/docker-" ID ".scope"));
	check("same pid namespace: no pid inside", ci.ns_pid == 0);

	check("kubepods, systemd driver: id and pod uid",
	      container_info_parse("0::/kubepods.slice/kubepods-burstable.slice/"
				   "kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/"
				   "cri-containerd-" ID ".scope\n", "\t900\t12", &ci) &&
	      !strcmp(ci.id, ID) && !strcmp(ci.pod_uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0") &&
	      ci.ns_pid == 12);
	check("kubepods, cgroupfs driver: id and pod uid",
	      container_info_parse("0::/kubepods/besteffort/pod0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/"
				   ID "\n", NULL, &ci) &&
	      !strcmp(ci.id, ID) && !strcmp(ci.pod_uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"));
	check("podman libpod scope",
	      container_info_parse("0::/machine.slice/libpod-" ID ".scope/container\n", "", &ci) &&
	      !strcmp(ci.id, ID));

	check("host process: not in a container",
	      !container_info_parse("4:memory:/process_api/6fbf9e37e085be85a1ed7171b2c1ca75\n"
				    "0::/user.slice/user-1000.slice/session-2.scope\n", "\t4312", &ci));
	check("host process: nothing set", !ci.id[0] && !ci.cgroup[0] && !ci.ns_pid);
	check("a 65-digit run is no id",
	      !container_info_parse("0::/x/" ID "0\n", "\t5", &ci) && !ci.id[0]);
	check("own pid namespace, no id: the unified cgroup path",
	      container_info_parse("3:cpu:/\n0::/machine/app\n", "\t5000\t1", &ci) &&
	      !ci.id[0] && !strcmp(ci.cgroup, "/machine/app") && ci.ns_pid == 1);
	check("own pid namespace in the root cgroup: pid inside, no cgroup path",
	      container_info_parse("0::/\n", "\t5000\t1", &ci) && !ci.cgroup[0] && ci.ns_pid == 1);
	check("hostile: empty and malformed lines",
	      !container_info_parse("\n::\n:\n0:\nno colon\n", " \t ", &ci));
	return unit_summary();
}
