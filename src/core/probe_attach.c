// SPDX-License-Identifier: MIT
/*
 * A session's probes on the collector: kept until it ends, in --duty
 * windows, or for the end scan, each with the session's slot in its cookie.
 */
#include "core/session_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "alys_events.h"	/* before the skeleton, which uses its types */
#include "alys.skel.h"
#include "base/clock_ns.h"
#include "core/session_link.h"

void probe_attach_refill_probes(struct session *t, struct refill_attach p[REFILL_PROBES])
{
	struct alys_bpf *s = t->skel;
	bool empty = t->o->empty_probes;

	p[0] = (struct refill_attach){ empty ? s->progs.empty_entry : s->progs.gc_refill,
				      &t->tg.gp.refill_at, false };
	p[1] = (struct refill_attach){ empty ? s->progs.empty_entry : s->progs.gc_kind_global_entry,
				      &t->tg.gp.kind_global, false };
	p[2] = (struct refill_attach){ empty ? s->progs.empty_return : s->progs.gc_alloc_return,
				      &t->tg.gp.kind_global, true };
	p[3] = (struct refill_attach){ empty ? s->progs.empty_entry : s->progs.gc_realloc_inplace,
				      &t->tg.gp.funcs[ALYS_KIND_REALLOC], false };
}

/* A probe at f could not be attached (err: an errno). Not said when a
 * window's attach finds the process exiting: session_timeout. */
static void attach_failed(struct session *t, const struct gc_func *f, int err)
{
	if (err == ESRCH && t->refill_announced)
		return;
	fail("cannot attach a uprobe to %s in %s: %s%s\n", f->name, t->tg.gp.name, strerror(err),
	     err == EACCES || err == EPERM ?
	     " (uprobes need root, or CAP_SYS_ADMIN with CAP_BPF and CAP_PERFMON)" : "");
}

/* Said once with -v. */
static void announce_probe(struct session *t, const struct gc_func *f, bool ret)
{
	if (t->o->verbose)
		say(t, "%s %s+0x%lx (%s)%s\n", ret ? "uretprobe" : "uprobe", f->name,
		    (unsigned long)f->place.offset, f->place.insn,
		    f->place.emulated ? "" : ": single-stepped, slower");
}

struct bpf_link *probe_attach_link(struct session *t, struct bpf_program *prog,
				   const struct gc_func *f, bool ret, __u64 cookie, bool announce)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret,
		    .bpf_cookie = slot_cookie(t) | cookie);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, t->tg.pid, t->tg.gp.path,
					      f->probe_file_off, &opts);
	if (!link) {
		attach_failed(t, f, errno);
		return NULL;
	}
	if (announce)
		announce_probe(t, f, ret);
	return link;
}

int probe_attach_multi(struct session *t, struct bpf_program *prog, const struct gc_func *f,
		       bool ret, __u64 cookie, bool announce)
{
	int fd = uprobe_multi_link_create(bpf_program__fd(prog), ALYS_BPF_TRACE_UPROBE_MULTI,
					  ret ? ALYS_BPF_F_UPROBE_MULTI_RETURN : 0, t->tg.gp.path,
					  f->probe_file_off, slot_cookie(t) | cookie, t->tg.pid);

	if (fd < 0) {
		attach_failed(t, f, -fd);
		return -1;
	}
	if (announce)
		announce_probe(t, f, ret);
	return fd;
}

/* A session's arrays of kept probes are sized for what it attaches. */
static int no_room(const struct gc_func *f)
{
	fail("cannot attach a uprobe to %s: more probes than a session has room "
	     "for (a bug: please report it)\n", f->name);
	return -1;
}

/* A probe kept until finish(). */
static int attach_one(struct session *t, struct bpf_program *prog, const struct gc_func *f,
		      bool ret, __u64 cookie)
{
	struct bpf_link *link;

	if (t->nlinks >= (int)(sizeof(t->links) / sizeof(t->links[0])))
		return no_room(f);
	link = probe_attach_link(t, prog, f, ret, cookie, true);
	if (!link)
		return -1;
	t->links[t->nlinks++] = link;
	return 0;
}

/* A probe kept until finish(), as an uprobe_multi link where the kernel
 * has them (bpf_setup.c gave the program that attach type). */
static int attach_kept(struct session *t, struct bpf_program *prog, const struct gc_func *f,
		       bool ret, __u64 cookie)
{
	int fd;

	if (!t->multi)
		return attach_one(t, prog, f, ret, cookie);
	if (t->nsessions >= (int)(sizeof(t->session_fds) / sizeof(t->session_fds[0])))
		return no_room(f);
	fd = probe_attach_multi(t, prog, f, ret, cookie, true);
	if (fd < 0)
		return -1;
	t->session_fds[t->nsessions++] = fd;
	return 0;
}

/* --sample refill's probes (probe_attach_refill_probes), GC_realloc's if with_realloc.
 * refill_windows.c detaches them. */
static int attach_refill(void *ctx, bool with_realloc, struct probe_link *links, int *n)
{
	struct session *t = ctx;
	bool announce = !t->refill_announced;
	struct refill_attach probes[REFILL_PROBES];
	size_t nprobes = REFILL_PROBES - !(with_realloc && t->tg.gp.funcs[ALYS_KIND_REALLOC].found);

	probe_attach_refill_probes(t, probes);
	*n = 0;
	for (size_t i = 0; i < nprobes; i++) {
		links[*n] = (struct probe_link){ NULL, -1 };
		if (t->refill_multi)
			links[*n].fd = probe_attach_multi(t, probes[i].prog, probes[i].f,
							  probes[i].ret, 0, announce);
		else
			links[*n].link = probe_attach_link(t, probes[i].prog, probes[i].f,
							    probes[i].ret, 0, announce);
		if (!links[*n].link && links[*n].fd < 0)
			return -1;
		(*n)++;
	}
	t->refill_announced = true;	/* --duty attaches them every window */
	return 0;
}

/* What gc_alloc_entry and gc_alloc_session read from their attach cookie
 * (bpf/alys.bpf.c): the kind, above its 8 bits the probe's ELF address, and
 * the slot in the top byte (slot_cookie). */
static __u64 alloc_cookie(const struct session *t, int kind)
{
	return slot_cookie(t) | t->tg.gp.funcs[kind].probe_vaddr << 8 | (__u64)kind;
}

int probe_attach_all(struct session *t)
{
	struct alys_bpf *s = t->skel;
	const struct gc_func *f = t->tg.gp.funcs;

	if (t->o->census_every &&
	    attach_one(t, s->progs.census_setcb_entry, &t->tg.gp.setcb, false, 0))
		return -1;
	if (t->o->census_every && !t->launched) {
		char err[PATH_MAX + 256];

		if (census_session_attach_running(&t->census, err, sizeof(err))) {
			fail("%s\n", err);
			return -1;
		}
	}
	if (t->refill) {
		t->rw = (struct refill_windows){
			.duty_pct = t->duty_pct, .launched = t->launched,
			.attach = attach_refill, .attach_ctx = t,
			.bpf_from = &t->bs.st->duty_from_ns,
			.bpf_until = &t->bs.st->duty_until_ns,
		};
		gc_count_init(&t->rw.count, t->tg.pid, &t->tg.gp);
		if (refill_windows_start(&t->rw, clock_ns(CLOCK_MONOTONIC))) {
			fail("cannot %s\n", t->duty_pct < 100 ?
			     "read the collector's byte count in the target (for --duty)" :
			     "attach the refill probes");
			return -1;
		}
	}
	for (int k = ALYS_KIND_MALLOC; k <= ALYS_KIND_FREE; k++) {
		/* the allocation kinds share one program, told apart by the cookie */
		bool alloc = k != ALYS_KIND_FREE;

		if (!f[k].found || t->census_only || t->refill)
			continue;
		if (t->uprobe_sessions && alloc) {
			int fd = session_link_create(bpf_program__fd(s->progs.gc_alloc_session),
						     t->tg.gp.path, f[k].probe_file_off,
						     alloc_cookie(t, k), t->tg.pid);

			if (fd < 0) {
				fail("cannot attach a uprobe session to %s in %s: %s\n",
				     f[k].name, t->tg.gp.name, strerror(-fd));
				return -1;
			}
			t->session_fds[t->nsessions++] = fd;
			if (t->o->verbose)
				say(t, "uprobe session %s+0x%lx (%s)\n", f[k].name,
				    (unsigned long)f[k].place.offset, f[k].place.insn);
			continue;
		}
		if (attach_kept(t, t->o->empty_probes ? s->progs.empty_entry
				  : alloc ? s->progs.gc_alloc_entry : s->progs.gc_free_entry,
				&f[k], false, alloc ? alloc_cookie(t, k) : 0))
			return -1;
		/* Benchmarks (ALYS_BPF_EMPTY_ENTRY_ONLY=1 with --empty-probes): the
		 * floor of a call whose block is read at entry, one trap. */
		if (alloc && !(t->o->empty_probes && getenv("ALYS_BPF_EMPTY_ENTRY_ONLY") &&
			       *getenv("ALYS_BPF_EMPTY_ENTRY_ONLY")) &&
		    attach_kept(t, t->o->empty_probes ? s->progs.empty_return
						      : s->progs.gc_alloc_return, &f[k], true, 0))
			return -1;
	}
	if (t->live.mode == ALYS_LIVE_MARKS && t->tg.gp.collect.found && !t->o->empty_probes &&
	    attach_kept(t, s->progs.gc_collect_entry, &t->tg.gp.collect, false, 0))
		return -1;
	/* the collection's entry and the stop share a program (one walk to
	 * verify), told apart by the cookie's ALYS_COOKIE_COLLECT */
	if (t->pauses && (attach_kept(t, s->progs.gc_world_stop, &t->tg.gp.stop_world, false, 0) ||
			  attach_kept(t, s->progs.gc_world_started, &t->tg.gp.start_world, true, 0)))
		return -1;
	if (t->pauses && t->tg.gp.collect_inner.found &&
	    (attach_kept(t, s->progs.gc_world_stop, &t->tg.gp.collect_inner, false,
			 ALYS_COOKIE_COLLECT) ||
	     attach_kept(t, s->progs.gc_collect_end, &t->tg.gp.collect_inner, true, 0)))
		return -1;
	if (t->grows && attach_kept(t, s->progs.gc_heap_grow, &t->tg.gp.heap_grow, false, 0))
		return -1;
	if (t->live.mode == ALYS_LIVE_MARKS && !t->o->empty_probes) {
		int err = bpf_slot_watch_exit(&t->bs, t->tg.pid);

		if (err) {
			fail("cannot attach to the exit_group tracepoint (for the liveness scan at "
			     "exit): %s; is tracefs available (CONFIG_FTRACE_SYSCALLS)?\n",
			     strerror(-err));
			return -1;
		}
	}
	return 0;
}
