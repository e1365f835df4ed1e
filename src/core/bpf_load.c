// SPDX-License-Identifier: MIT
#include "core/bpf_load.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "alys_events.h"	/* before the skeleton, which uses its types */
#include "alys.skel.h"

/* Past four, the longest program alone bounds the time, and each helper
 * parses the kernel's BTF again (tens of MiB while it loads). */
#define HELPERS_MAX 4
#define COSTLY_MAX 64
/* A program with this much code of its own before relocation (a walk or a
 * scan inlined) takes the verifier 0.05 s or more; the others, with a few
 * dozen instructions, well under a millisecond. */
#define COSTLY_INSNS 256
/* What such a program's verification costs besides its own code: the loop
 * callbacks of the walk or the scan it calls, ~4,000 instructions that
 * libbpf appends only at load. Without it three programs with a walk each
 * went to one helper, the longest alone to the other (0.37 s against
 * 0.16). */
#define COSTLY_SUBPROGS 4096

struct bpf_helpers {
	int n;
	struct alys_bpf *obj[HELPERS_MAX];
};

struct costly {
	struct bpf_program *prog;	/* the object's */
	size_t insns;
	int helper;
};

static int by_insns_desc(const void *a, const void *b)
{
	const struct costly *x = a, *y = b;

	return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : 0;
}

/* The helper a program of the object was given to, or -1. */
static int helper_of(const struct costly *c, size_t n, const struct bpf_program *p)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].prog == p)
			return c[i].helper;
	return -1;
}

/* Helper k opened: the programs given to it chosen as the object's were,
 * and every map of the object (loaded) taken in place of its own. */
static int adopt(struct alys_bpf *hk, int k, const struct alys_bpf *skel,
		 const struct costly *c, size_t nc)
{
	struct bpf_program *p, *mp = NULL;
	struct bpf_map *m, *mm = NULL;
	int err;

	bpf_object__for_each_program(p, hk->obj) {
		mp = bpf_object__next_program(skel->obj, mp);
		if (!mp)
			return -EINVAL;
		if (helper_of(c, nc, mp) != k) {
			bpf_program__set_autoload(p, false);
			continue;
		}
		bpf_program__set_type(p, bpf_program__type(mp));
		bpf_program__set_expected_attach_type(p, bpf_program__expected_attach_type(mp));
	}
	bpf_object__for_each_map(m, hk->obj) {
		mm = bpf_object__next_map(skel->obj, mm);
		if (!mm)
			return -EINVAL;
		if (bpf_map__fd(mm) < 0) {
			bpf_map__set_autocreate(m, false);
			continue;
		}
		err = bpf_map__reuse_fd(m, bpf_map__fd(mm));
		if (err)
			return err;
	}
	return 0;
}

/* The CPUs this process may run on (a container's cpuset, taskset). */
static long usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

struct job {
	struct alys_bpf *obj;
	int err;
};

static void *load_job(void *arg)
{
	struct job *j = arg;

	j->err = alys_bpf__load(j->obj);
	return NULL;
}

int bpf_load(struct alys_bpf *skel, struct bpf_helpers **helpers)
{
	struct costly c[COSTLY_MAX];
	size_t nc = 0, load[HELPERS_MAX] = { 0 };
	long cpus = usable_cpus();
	struct job jobs[HELPERS_MAX];
	pthread_t thr[HELPERS_MAX];
	bool started[HELPERS_MAX] = { false };
	const struct bpf_object_skeleton *sk = skel->skeleton;
	struct bpf_helpers *h;
	struct bpf_program *p;
	int n, err = 0;

	*helpers = NULL;
	if (!getenv("ALYS_BPF_SERIAL_LOAD") || !*getenv("ALYS_BPF_SERIAL_LOAD"))
		bpf_object__for_each_program(p, skel->obj)
			if (bpf_program__autoload(p) && bpf_program__insn_cnt(p) >= COSTLY_INSNS &&
			    nc < COSTLY_MAX)
				c[nc++] = (struct costly){
					p, bpf_program__insn_cnt(p) + COSTLY_SUBPROGS, -1
				};
	n = cpus < (long)nc ? (int)cpus : (int)nc;
	if (n > HELPERS_MAX)
		n = HELPERS_MAX;
	if (n < 2)
		return alys_bpf__load(skel);
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	/* The longest first, each to the helper with the least so far. */
	qsort(c, nc, sizeof(c[0]), by_insns_desc);
	for (size_t i = 0; i < nc; i++) {
		int least = 0;

		for (int k = 1; k < n; k++)
			if (load[k] < load[least])
				least = k;
		c[i].helper = least;
		load[least] += c[i].insns;
		bpf_program__set_autoload(c[i].prog, false);
	}
	/* The object first: it makes the maps the helpers take. */
	err = alys_bpf__load(skel);
	if (err)
		goto fail;
	h->n = n;
	for (int k = 0; k < n; k++) {
		h->obj[k] = alys_bpf__open();
		if (!h->obj[k]) {
			err = -errno ? -errno : -ENOMEM;
			goto fail;
		}
		err = adopt(h->obj[k], k, skel, c, nc);
		if (err)
			goto fail;
	}
	for (int k = 0; k < n; k++) {
		jobs[k] = (struct job){ h->obj[k], 0 };
		started[k] = k > 0 && !pthread_create(&thr[k], NULL, load_job, &jobs[k]);
	}
	/* helper 0 on this thread, and any a thread could not be made for */
	for (int k = 0; k < n; k++)
		if (!started[k])
			load_job(&jobs[k]);
	for (int k = 0; k < n; k++) {
		if (started[k])
			pthread_join(thr[k], NULL);
		if (jobs[k].err && !err)
			err = jobs[k].err;
	}
	if (err)
		goto fail;
	/* The skeletons list their programs in the same order. */
	for (int i = 0; i < sk->prog_cnt; i++) {
		int k = helper_of(c, nc, *sk->progs[i].prog);

		if (k >= 0)
			*sk->progs[i].prog = *h->obj[k]->skeleton->progs[i].prog;
	}
	*helpers = h;
	return 0;
fail:
	bpf_helpers_free(h);
	return err;
}

int bpf_helpers_count(const struct bpf_helpers *h)
{
	return h ? h->n : 0;
}

bool bpf_helpers_loaded(const struct bpf_helpers *h, const char *name)
{
	for (int k = 0; h && k < h->n; k++) {
		struct bpf_program *p = bpf_object__find_program_by_name(h->obj[k]->obj, name);

		if (p && bpf_program__autoload(p))
			return true;
	}
	return false;
}

void bpf_helpers_free(struct bpf_helpers *h)
{
	if (!h)
		return;
	for (int k = 0; k < h->n; k++)
		alys_bpf__destroy(h->obj[k]);
	free(h);
}
