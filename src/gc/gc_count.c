// SPDX-License-Identifier: MIT
#include "gc/gc_count.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "gc/gc_probes.h"
#include "base/maps_file.h"

/* Load bias of the file holding libgc in the target: its executable
 * mapping of GC_malloc's probe. */
struct find_bias {
	const struct gc_probes *gp;
	pid_t pid;
	struct stat want;
	uint64_t bias;
};

static int bias_of_line(const struct maps_line *l, void *arg)
{
	struct find_bias *fb = arg;
	const struct gc_probes *gp = fb->gp;
	struct stat st;

	const struct gc_func *f = &gp->funcs[ALYS_KIND_MALLOC];

	if (!maps_line_is_exec_file(l) || f->probe_file_off < l->offset ||
	    f->probe_file_off >= l->offset + (l->end - l->start))
		return 0;
	if (stat(l->file, &st) || st.st_ino != fb->want.st_ino || st.st_dev != fb->want.st_dev)
		return 0;
	fb->bias = l->start + (f->probe_file_off - l->offset) - f->probe_vaddr;
	return 1;
}

static bool know_bias(struct gc_count *c)
{
	struct find_bias fb = { .gp = c->gp, .pid = c->pid };

	if (c->bias_known)
		return true;
	if (stat(c->gp->path, &fb.want) || proc_maps_each(c->pid, bias_of_line, &fb) != 1)
		return false;
	c->bias = fb.bias;
	c->bias_known = true;
	return true;
}

bool gc_count_bias(struct gc_count *c, uint64_t *bias)
{
	if (!c->gp || !know_bias(c))
		return false;
	*bias = c->bias;
	return true;
}

bool gc_count_read_word(struct gc_count *c, uint64_t vaddr, uint64_t *value)
{
	struct iovec local = { value, 8 }, remote;

	if (!c->gp || !know_bias(c))
		return false;
	remote = (struct iovec){ (void *)(c->bias + vaddr), 8 };
	return process_vm_readv(c->pid, &local, 1, &remote, 1, 0) == 8;
}

void gc_count_init(struct gc_count *c, pid_t pid, const struct gc_probes *gp)
{
	*c = (struct gc_count){ .pid = pid, .gp = gp };
}

bool gc_count_read(struct gc_count *c, uint64_t *total)
{
	uint64_t v[4];
	struct iovec local[4] = { { &v[0], 8 }, { &v[1], 8 }, { &v[2], 8 }, { &v[3], 8 } };
	struct iovec remote[4];
	int tries = 0;

	if (!c->gp)
		return false;	/* not set up: no --duty */
	if (!know_bias(c))
		return false;
	for (int i = 0; i < 4; i++)
		remote[i] = (struct iovec){ (void *)(c->bias + c->gp->total_bytes_vaddr[i & 1]), 8 };
	/* The two words change together at a collection (the bytes since the
	 * last one move into the total before it), or as a thread refills
	 * while another collects: a pair read across that moment counts a
	 * collection's bytes twice or not at all. Read twice, until both
	 * readings agree. */
	do {
		if (process_vm_readv(c->pid, local, 4, remote, 4, 0) != 32) {
			/* Gone (it exited): the last reading stands. */
			*total = c->last;
			return c->last != 0;
		}
	} while ((v[0] != v[2] || v[1] != v[3]) && ++tries < 16);
	if (v[0] + v[1] < c->last)
		return *total = c->last, true;	/* torn still: the last stands */
	*total = c->last = v[0] + v[1];
	return true;
}

