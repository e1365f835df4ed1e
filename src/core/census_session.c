// SPDX-License-Identifier: MIT
#include "core/census_session.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gc/census.h"
#include "gc/gc_count.h"
#include "gc/gc_probes.h"
#include "core/proc_maps.h"
#include "core/trace_writer.h"
#include "lib/util.h"

/* The target stopped itself (SIGSTOP from the census probes): wait until
 * it really is stopped, so that nothing changes under the walk. */
static bool wait_stopped(pid_t pid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int tries = 0; tries < 2000; tries++) {
		FILE *f = fopen(path, "r");
		char *p = NULL;

		if (!f)
			return false;
		if (fgets(buf, sizeof(buf), f))
			p = strrchr(buf, ')');
		fclose(f);
		if (p && (p[2] == 'T' || p[2] == 't'))
			return true;
		if (p && (p[2] == 'Z' || p[2] == 'X'))
			return false;
		usleep(500);
	}
	return false;
}

/* The callback given to GC_set_start_callback: probe it where it is
 * mapped (an executable's code, usually the Crystal runtime's). */
struct maps_lookup {
	uint64_t addr;
	uint64_t start, offset;
	char path[PATH_MAX];
	char file[PATH_MAX + 64];
};

static int find_mapping_of(const struct maps_line *l, void *arg)
{
	struct maps_lookup *m = arg;

	if (m->addr < l->start || m->addr >= l->end || mapping_is_anon(l->path))
		return 0;
	m->start = l->start;
	m->offset = l->offset;
	snprintf(m->path, sizeof(m->path), "%s", l->path);
	snprintf(m->file, sizeof(m->file), "%s", l->file);
	return 1;
}

static int attach_trigger(struct census_session *cs, uint64_t addr, char *err, size_t errlen)
{
	struct maps_lookup m = { .addr = addr };
	unsigned long long file_off;
	struct bpf_link *link;

	if (proc_maps_each(cs->pid, find_mapping_of, &m) != 1) {
		snprintf(err, errlen, "the collector's start callback 0x%llx is in no mapped file",
			 (unsigned long long)addr);
		return -1;
	}
	file_off = addr - m.start + m.offset;
	{
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cs->trigger_cookie);

		link = bpf_program__attach_uprobe_opts(cs->trigger_prog, cs->pid, m.file, file_off,
						       &opts);
	}
	if (!link) {
		snprintf(err, errlen, "cannot attach a uprobe to the start callback in %s: %s",
			 m.path, strerror(errno));
		return -1;
	}
	/* A program that registers a new callback gets a probe on it; the
	 * old one may be chained to and keeps its probe. */
	if (cs->trigger)
		bpf_link__destroy(cs->trigger);
	cs->trigger = link;
	if (cs->verbose)
		fail("census trigger: uprobe on the start callback at "
			"%s+0x%llx\n", m.path, file_off);
	return 0;
}

int census_session_check(const struct gc_probes *gp, bool launched, char *err, size_t errlen)
{
	if (!launched && !gp->startcb_vaddr) {
		snprintf(err, errlen, "--census --pid: cannot find where %s keeps the start "
			 "callback the program registered (%s); launch the command under "
			 "alys-bpf --census instead", gp->name, gp->startcb_why);
		return -1;
	}
	if (!gp->layout_ok || !gp->gc_no_vaddr) {
		snprintf(err, errlen, "--census: cannot find the collector's mark bytes in %s (%s); "
			 "use a libgc 7.x/8.x build exporting GC_is_marked, GC_size, GC_base, "
			 "GC_arrays and GC_gc_no", gp->name, gp->layout_why);
		return -1;
	}
	if (!gp->setcb.found) {
		snprintf(err, errlen, "--census: %s does not export GC_set_start_callback, where "
			 "the census finds its once-per-collection trigger; use libgc 7.2 or "
			 "later", gp->name);
		return -1;
	}
	return 0;
}

/* The census record: the walk's types with live objects, as rows. */
static void write_census(struct census_session *cs, const struct alys_rb_census *c,
			 const struct census *walk)
{
	struct trace_census_type *rows = calloc(walk->n ? walk->n : 1, sizeof(*rows));
	size_t n = 0;

	if (!rows) {
		fail("census: out of memory: not written\n");
		return;
	}
	for (size_t i = 0; i < walk->cap && n < walk->n; i++) {
		const struct census_type *e = &walk->v[i];

		if (e->objects)
			rows[n++] = (struct trace_census_type){ e->type_id, e->objects, e->bytes,
							 e->example };
	}
	trace_writer_census(cs->w, c->ts_ns, c->gc_no, walk->blocks, walk->unreadable,
			    walk->walk_ns, rows, n);
	free(rows);
}

void census_session_on_stop(struct census_session *cs, const struct alys_rb_census *c,
			    bool exited)
{
	char err[PATH_MAX + 256];

	if (!wait_stopped(cs->pid)) {
		if (!exited)
			fail("census: pid %d did not stop; nothing walked\n",
				cs->pid);
		kill(cs->pid, SIGCONT);
		return;
	}
	if (c->what == 0) {
		/* Each callback the program registers gets the probe (a new
		 * one may chain to the old: the BPF side stops once per
		 * collection). */
		cs->bias = c->bias;
		*cs->trigger_every = cs->every;
		*cs->trigger_gc_no_addr = c->bias + cs->gp->gc_no_vaddr;
		if (attach_trigger(cs, c->arg, err, sizeof(err)))
			fail("census: %s: no census will be taken\n", err);
	} else {
		struct census walk = { 0 };

		if (census_walk(cs->pid, &cs->gp->layout, cs->bias, &walk, cs->recorded,
				cs->recorded_arg, err, sizeof(err)))
			fail("census: %s\n", err);
		else
			write_census(cs, c, &walk);
		if (cs->verbose)
			fail("census after collection %u: %zu types, %llu "
				"blocks, %.1f ms\n", c->gc_no, walk.n,
				(unsigned long long)walk.blocks, walk.walk_ns / 1e6);
		census_free(&walk);
		cs->censuses++;
	}
	kill(cs->pid, SIGCONT);
}

int census_session_attach_running(struct census_session *cs, char *err, size_t errlen)
{
	struct gc_count gc;
	uint64_t cb = 0;

	gc_count_init(&gc, cs->pid, cs->gp);
	if (!gc_count_read_word(&gc, cs->gp->startcb_vaddr, &cb)) {
		snprintf(err, errlen, "--census: cannot read pid %d's collector state (%s)",
			 cs->pid, strerror(errno));
		return -1;
	}
	if (!cb) {
		snprintf(err, errlen, "--census: pid %d registered no collection start callback "
			 "(Crystal's GC.init does): no trigger for a census", cs->pid);
		return -1;
	}
	cs->bias = gc.bias;
	*cs->trigger_every = cs->every;
	*cs->trigger_gc_no_addr = gc.bias + cs->gp->gc_no_vaddr;
	return attach_trigger(cs, cb, err, errlen);
}

void census_session_detach(struct census_session *cs)
{
	bpf_link__destroy(cs->trigger);
	cs->trigger = NULL;
}
