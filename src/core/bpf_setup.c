// SPDX-License-Identifier: MIT
/*
 * The BPF object for a session: programs and read-only data chosen for its
 * target and options, loaded or found shared in the pool (bpf_pool.h),
 * before anything is attached.
 */
#include "core/session_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alys_events.h"	/* before the skeleton, which uses its types */
#include "alys.skel.h"
#include "base/clock_ns.h"
#include "core/bpf_load.h"
#include "core/direct_map.h"
#include "core/session_link.h"
#include "unwind/unwind_maps.h"

#define TRACKED_ALL (1u << 20)		/* hblks of followed blocks, all calls: 4 GiB */
#define TRACKED_SAMPLED (1u << 18)	/* sampled (one an hblk, mostly) */
/* --ringbuf-size's default: see bpf/alys.bpf.c */
#define RINGBUF_DEFAULT (64u << 20)

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || level == LIBBPF_INFO)
		return 0;
	if (getenv("ALYS_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* Room for the tables built now and as many again for libraries loaded
 * later, at least 1M rows (16 MiB of kernel memory). */
static uint32_t unwind_rows_cap(const struct session *t)
{
	size_t rows = unwind_maps_rows(t->um);

	if (t->o->unwind != ALYS_UNWIND_DWARF || t->o->empty_probes)
		return 1;
	rows += rows > (1u << 20) ? rows : (1u << 20);
	return rows > (1u << 26) ? (1u << 26) : (uint32_t)rows;
}

/* -ln(u) for u in [1/2, 1), 2^20 fixed point: see bpf/sample.h. */
static void fill_neg_log_table(volatile __u32 *table, size_t n)
{
	for (size_t j = 0; j < n; j++)
		table[j] = (__u32)lround(-log((n + j + 0.5) / (2.0 * n)) * (1 << 20));
}

/* Why the kernel refused the BPF program, and what to do about it. */
static void report_load_error(int err)
{
	switch (-err) {
	case ENOSYS:
		fail("cannot load the BPF program: this kernel has no bpf(2) system call "
		     "(%s): use a kernel built with CONFIG_BPF_SYSCALL=y, or, in a "
		     "container, a seccomp profile that allows bpf(2)\n", strerror(-err));
		break;
	case EPERM:
		fail("cannot load the BPF program: the kernel refused bpf(2) (%s): "
		     "alys-bpf needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): run it as "
		     "root with sudo, outside a container or in one granted these "
		     "capabilities, and with kernel lockdown off\n", strerror(-err));
		break;
	case EACCES: {
		/* the verifier's answer to a program it cannot prove safe; a
		 * missing capability is EPERM */
		struct utsname u;

		fail("cannot load the BPF program: the kernel's verifier refused it (%s): "
		     "this kernel is Linux %s, alys-bpf's programs are tested on Linux "
		     "6.18. Run again with ALYS_BPF_DEBUG=1 to see the verifier's log, "
		     "and report it with the log's last lines\n",
		     strerror(-err), uname(&u) ? "?" : u.release);
		break;
	}
	default:
		fail("cannot load the BPF program into the kernel: %s.\n"
		     "  Is BPF enabled (CONFIG_BPF_SYSCALL) and not locked down? "
		     "Set ALYS_BPF_DEBUG=1 to see the verifier's log.\n", strerror(-err));
	}
}

/* Sampled calls with an unsampled majority are cheapest as uprobe
 * sessions: the kernel skips the return probe of calls the entry did not
 * sample. The sessions' programs, or the classic entry and return ones, are
 * loaded, not both; and only the programs attached (probe_attach_all): each
 * is verified, ~0.1-0.3 s apiece. */
static void choose_programs(struct session *t)
{
	struct alys_bpf *s = t->skel;
	bool per_call = !t->census_only && !t->refill && !t->o->empty_probes;

	bpf_program__set_autoload(s->progs.gc_alloc_session, per_call && t->uprobe_sessions);
	if (per_call && t->uprobe_sessions)
		bpf_program__set_expected_attach_type(s->progs.gc_alloc_session,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_SESSION);
	bpf_program__set_autoload(s->progs.gc_alloc_entry, per_call && !t->uprobe_sessions);
	bpf_program__set_autoload(s->progs.gc_free_entry, per_call);
	bpf_program__set_autoload(s->progs.gc_alloc_return,
				  !t->o->empty_probes && (t->refill || (per_call && !t->uprobe_sessions)));
	bpf_program__set_autoload(s->progs.gc_kind_global_entry, t->refill && !t->o->empty_probes);
	bpf_program__set_autoload(s->progs.gc_refill, t->refill && !t->o->empty_probes);
	bpf_program__set_autoload(s->progs.gc_realloc_inplace, t->refill && !t->o->empty_probes);
	bpf_program__set_autoload(s->progs.gc_collect_entry,
				  t->live.mode == ALYS_LIVE_MARKS && !t->o->empty_probes);
	bpf_program__set_autoload(s->progs.exit_group_enter,
				  t->live.mode == ALYS_LIVE_MARKS && !t->o->empty_probes);
	bpf_program__set_autoload(s->progs.end_scan_entry,
				  t->live.mode == ALYS_LIVE_MARKS && !t->o->empty_probes);
	/* ALYS_BPF_NO_PAUSES: without the pause probes, for comparison
	 * (bench/http_server.sh) */
	t->pauses = !t->o->empty_probes && t->tg.gp.stop_world.found &&
		    t->tg.gp.start_world.found && !getenv("ALYS_BPF_NO_PAUSES");
	bpf_program__set_autoload(s->progs.gc_world_stop, t->pauses);
	bpf_program__set_autoload(s->progs.gc_world_started, t->pauses);
	bpf_program__set_autoload(s->progs.gc_collect_end,
				  t->pauses && t->tg.gp.collect_inner.found);
	t->grows = !t->o->empty_probes && t->tg.gp.heap_grow.found &&
		   !getenv("ALYS_BPF_NO_PAUSES");
	bpf_program__set_autoload(s->progs.gc_heap_grow, t->grows);
	if (t->o->verbose && !t->o->empty_probes &&
	    !(t->tg.gp.stop_world.found && t->tg.gp.start_world.found))
		say(t, "note: no GC pause records: %s\n", t->tg.gp.pauses_why);
	if (t->o->verbose && !t->o->empty_probes && !t->tg.gp.heap_grow.found)
		say(t, "note: no heap growth records: %s\n", t->tg.gp.grow_why);
	if (t->o->verbose && t->predict_blocks) {
		const struct gc_thread_key *k = &t->tg.gp.thread_key;
		char where[96];

		if (k->mode == ALYS_TLS_STATIC)
			snprintf(where, sizeof(where), "at fs%+lld", (long long)k->tpoff);
		else
			snprintf(where, sizeof(where), "in libgc's TLS block +%llu, module id at 0x%llx",
				 (unsigned long long)k->dtpoff, (unsigned long long)k->modid_vaddr);
		say(t, "allocations: small blocks read off the thread's free list at entry "
		    "(GC_thread_key %s), no return probe for them\n", where);
	} else if (t->o->verbose && !t->tg.gp.thread_key.mode && !t->o->empty_probes &&
		 !t->refill && !t->census_only)
		say(t, "note: every allocation takes a return probe: %s\n",
		    t->tg.gp.thread_key_why);
	bpf_program__set_autoload(s->progs.empty_entry, t->o->empty_probes);
	bpf_program__set_autoload(s->progs.empty_return, t->o->empty_probes);
	bpf_program__set_autoload(s->progs.census_setcb_entry, t->o->census_every != 0);
	bpf_program__set_autoload(s->progs.census_trigger, t->o->census_every != 0);
	/* Every probe kept until the end, the refill probes and the end
	 * scan's as uprobe_multi links where the kernel has them (6.6+;
	 * session_link.h): no perf event, whose making and closing queue on
	 * a host-wide mutex (a full trace's 13 closed in ~0.45 s as perf
	 * uprobes, at once). ALYS_BPF_NO_MULTI: as perf uprobes, for
	 * comparison. */
	t->multi = !getenv("ALYS_BPF_NO_MULTI") && uprobe_multi_supported();
	t->refill_multi = t->refill && t->multi;
	if (t->multi) {
		bpf_program__set_expected_attach_type(s->progs.gc_alloc_entry,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.gc_alloc_return,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.gc_free_entry,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.empty_entry,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.empty_return,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.gc_collect_entry,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.end_scan_entry,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.gc_world_stop,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.gc_world_started,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.gc_collect_end,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.gc_heap_grow,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
	}
	if (t->refill_multi) {
		struct refill_attach probes[REFILL_PROBES];

		probe_attach_refill_probes(t, probes);
		for (size_t i = 0; i < REFILL_PROBES; i++)
			bpf_program__set_expected_attach_type(probes[i].prog,
				(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
	}
	t->skel->rodata->setcb_vaddr = t->tg.gp.setcb.probe_vaddr;
	t->skel->rodata->world_stop_vaddr = t->tg.gp.stop_world.probe_vaddr;
	t->skel->rodata->collect_inner_vaddr = t->tg.gp.collect_inner.found ?
					       t->tg.gp.collect_inner.probe_vaddr : 0;
	t->skel->rodata->heap_grow_vaddr = t->tg.gp.heap_grow.found ?
					   t->tg.gp.heap_grow.probe_vaddr : 0;
	t->skel->rodata->session_mode = t->uprobe_sessions;
}

void bpf_setup_choose_sampling(struct session *t)
{
	int mode = t->o->sample;

	if (mode == SAMPLE_DEFAULT)
		mode = t->o->pid && !t->census_only ? SAMPLE_REFILL : SAMPLE_ALL;
	t->sample_bytes = mode == SAMPLE_BYTES ? t->o->sample_bytes : 0;
	if (mode == SAMPLE_REFILL && !t->tg.gp.refill_ok) {
		t->refill_fell_back = true;
		say(t, "notice: cannot probe the collector's slow paths (%s); sampling "
		    "bytes:%uK instead, which takes a probe on every allocation\n",
		    t->tg.gp.refill_why, SAMPLE_FALLBACK_BYTES >> 10);
		mode = SAMPLE_BYTES;
		t->sample_bytes = SAMPLE_FALLBACK_BYTES;
	}
	t->refill = mode == SAMPLE_REFILL;
	t->duty_pct = 100;
	if (t->refill)
		t->duty_pct = t->o->duty_pct ? t->o->duty_pct :
			      t->o->pid ? DUTY_DEFAULT_PID : 100;
	if (t->duty_pct < 100 && !t->tg.gp.total_bytes_ok) {
		say(t, "notice: cannot read the collector's byte count to weigh the --duty "
		    "windows by (%s); the refill probes stay attached all the time\n",
		    t->tg.gp.total_bytes_why);
		t->duty_pct = 100;
	}
	if (t->refill && t->o->verbose) {
		const struct refill_probe *rp = &t->tg.gp.refill;
		char size_at[32];

		if (rp->size_reg >= 0)
			snprintf(size_at, sizeof(size_at), "DWARF reg %d", rp->size_reg);
		else
			snprintf(size_at, sizeof(size_at), "the stack at sp+%d", rp->size_sp_off);
		say(t, "refill probe: GC_malloc_kind+0x%lx (%s), list in DWARF reg %d, size in "
		    "%s, kind in %d\n", (unsigned long)(rp->probe_vaddr - rp->func_vaddr),
		    rp->insn, rp->fl_reg, size_at, rp->kind_reg);
	}
}

static void set_layout(struct session *t)
{
	const struct gc_layout *l = &t->tg.gp.layout;
	typeof(t->skel->rodata) r = t->skel->rodata;

	r->live_mode = (__u32)t->live.mode;
	if (t->live.mode != ALYS_LIVE_MARKS)
		return;
	r->arrays_vaddr = l->arrays_vaddr;
	r->collect_vaddr = t->tg.gp.collect.found ? t->tg.gp.collect.probe_vaddr : 0;
	r->top_index_off = l->top_index_off;
	r->bi_key_off = l->bi_key_off;
	r->bi_link_off = l->bi_link_off;
	r->hb_sz_off = l->hb_sz_off;
	r->hb_flags_off = l->hb_flags_off;
	r->hb_marks_off = l->hb_marks_off;
	r->free_blk = l->free_blk;
	r->top_mask = l->top_mask;
	r->bottom_mask = l->bottom_mask;
	r->hi_shift = l->hi_shift;
	r->log_hblk = l->log_hblk;
	r->granule_shift = l->granule_shift;
	r->live_test_fail_first = t->live.test_fail_first;
}

static uint32_t ringbuf_bytes(const struct session *t)
{
	return t->o->ringbuf_size ? t->o->ringbuf_size : RINGBUF_DEFAULT;
}

/* The kernel refused the uprobe-session programs once (before Linux 6.13):
 * later sessions are configured without them, as the object loaded was. */
static bool no_uprobe_sessions;
/* This kernel's verifier refuses loads through bpf_rdonly_cast(p, 0) (a
 * recent kfunc use; 6.18 takes them): the spans are copied. */
static bool no_direct_map;

/* t->skel opened and configured for t (programs chosen, read-only data
 * set), not loaded: 0 or -1 (said). */
static int configure_bpf(struct session *t)
{
	const struct gc_probes *gp = &t->tg.gp;
	int rows_fd, objects_fd, procs_fd;
	uint32_t slots = 2;	/* a power of two, for the kernel's mask */

	libbpf_set_print(libbpf_quiet);
	t->skel = alys_bpf__open();
	if (!t->skel) {
		fail("cannot open the BPF program: %s\n", strerror(errno));
		return -1;
	}
	choose_programs(t);
	t->skel->rodata->sample_mean = t->sample_bytes;
	t->skel->rodata->sampled_trace = t->sample_bytes || t->refill;
	fill_neg_log_table(t->skel->rodata->neg_log_table,
			   sizeof(t->skel->rodata->neg_log_table) /
			   sizeof(t->skel->rodata->neg_log_table[0]));
	t->skel->rodata->max_frames = t->o->max_frames;
	/* frame pointers' walks check nothing in place: no use for it */
	t->skel->rodata->direct_map_pfn_mask =
		no_direct_map || t->o->unwind != ALYS_UNWIND_DWARF ? 0 : direct_map_pfn_mask();
	bpf_program__set_autoload(t->skel->progs.find_direct_map,
				  t->skel->rodata->direct_map_pfn_mask != 0);
	direct_map_finder(t->skel);
	t->skel->rodata->unwind_mode = t->o->unwind;
	for (int k = ALYS_KIND_MALLOC; k <= ALYS_KIND_FREE; k++)
		t->skel->rodata->probe_vaddr[k] = gp->funcs[k].found ? gp->funcs[k].probe_vaddr : 0;
	if (t->refill) {
		/* GC_malloc_kind_global stands in for both allocation kinds. */
		t->skel->rodata->probe_vaddr[ALYS_KIND_MALLOC] = gp->kind_global.probe_vaddr;
		t->skel->rodata->probe_vaddr[ALYS_KIND_MALLOC_ATOMIC] = gp->kind_global.probe_vaddr;
		t->skel->rodata->aip_vaddr = gp->aip_vaddr;
		t->skel->rodata->refill_vaddr = gp->refill.probe_vaddr;
		t->skel->rodata->refill_fl_reg = gp->refill.fl_reg;
		t->skel->rodata->refill_size_reg = gp->refill.size_reg;
		t->skel->rodata->refill_size_sp_off = gp->refill.size_sp_off;
		t->skel->rodata->refill_kind_reg = gp->refill.kind_reg;
	}
	t->skel->rodata->gc_no_vaddr = gp->gc_no_vaddr;
	if (t->predict_blocks) {
		t->skel->rodata->predict_tls = gp->thread_key.mode;
		t->skel->rodata->predict_tpoff = gp->thread_key.tpoff;
		t->skel->rodata->predict_modid_vaddr = gp->thread_key.modid_vaddr;
		t->skel->rodata->predict_dtpoff = gp->thread_key.dtpoff;
		t->skel->rodata->aip_vaddr = gp->aip_vaddr;
		/* Tests: every block read at entry checked at the return; each
		 * taken this many bytes off, a wrong layout to catch. */
		t->skel->rodata->predict_check_all = getenv("ALYS_BPF_PREDICT_CHECK_ALL") &&
						     *getenv("ALYS_BPF_PREDICT_CHECK_ALL");
		if (getenv("ALYS_BPF_PREDICT_SKEW"))
			t->skel->rodata->predict_skew = (__u32)atoi(getenv("ALYS_BPF_PREDICT_SKEW"));
	}
	set_layout(t);
	unwind_maps_fds(t->um, &rows_fd, &objects_fd, &procs_fd);
	if (rows_fd >= 0) {
		/* Another object (the agent's) made the tables' maps. */
		if (bpf_map__reuse_fd(t->skel->maps.unwind_rows, rows_fd) ||
		    bpf_map__reuse_fd(t->skel->maps.unwind_objects, objects_fd) ||
		    bpf_map__reuse_fd(t->skel->maps.unwind_procs, procs_fd)) {
			fail("cannot share the unwind tables with this session: %s\n",
			     strerror(errno));
			return -1;
		}
	} else {
		bpf_map__set_max_entries(t->skel->maps.unwind_rows, unwind_rows_cap(t));
	}
	while (slots < t->o->stack_cache)
		slots <<= 1;
	t->skel->rodata->stack_cache_mask = slots - 1;
	/* Wake the reader by a quarter full at the latest. */
	if (t->skel->rodata->wakeup_bytes > ringbuf_bytes(t) / 4)
		t->skel->rodata->wakeup_bytes = ringbuf_bytes(t) / 4;
	/* Tests: the small and mid tracked maps take this many collector
	 * blocks each, the rest go to the big one. */
	if (getenv("ALYS_BPF_TRACKED_SMALL_FILL") && *getenv("ALYS_BPF_TRACKED_SMALL_FILL"))
		t->skel->rodata->tracked_fill[0] = t->skel->rodata->tracked_fill[1] =
			atoll(getenv("ALYS_BPF_TRACKED_SMALL_FILL"));
	/* Tests: scans wait this many times their own length (default 4). */
	if (getenv("ALYS_BPF_SCAN_GAP") && *getenv("ALYS_BPF_SCAN_GAP"))
		t->skel->rodata->scan_gap = (__u32)atoi(getenv("ALYS_BPF_SCAN_GAP"));
	/* Tests: every frame walked, none checked against the last walk. */
	if (getenv("ALYS_BPF_NO_REUSE") && *getenv("ALYS_BPF_NO_REUSE"))
		t->skel->rodata->reuse_walks = false;
	return 0;
}

/* -v: what the verifier did for each costly program (its work is most of
 * the load's time; a program whose count doubles has a walk or a scan
 * checked twice, DESIGN.md's "Start and end"). */
static void say_verified(struct session *t)
{
	const struct bpf_object_skeleton *sk = t->skel->skeleton;
	char line[1024];
	size_t n = 0;

	for (int i = 0; i < sk->prog_cnt; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(*sk->progs[i].prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || info.verified_insns < 1000)
			continue;
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %s %u", sk->progs[i].name,
				      info.verified_insns);
		if (n >= sizeof(line))
			break;
	}
	if (n)
		say(t, "BPF instructions verified:%s\n", line);
}

static int load_bpf(struct session *t, struct bpf_helpers **helpers);

/* The object made and loaded again without what this kernel refused
 * (*off set for the daemon's later sessions; why said with -v). */
static int load_again(struct session *t, struct bpf_helpers **helpers, bool *off, const char *why)
{
	alys_bpf__destroy(t->skel);
	t->skel = NULL;
	*off = true;
	if (t->o->verbose)
		say(t, "%s\n", why);
	if (configure_bpf(t))
		return -1;
	return load_bpf(t, helpers);
}

/* t->skel, configured, loaded into the kernel, with *helpers (bpf_load.h):
 * 0 or -1 (said; t->skel to destroy, *helpers NULL). */
static int load_bpf(struct session *t, struct bpf_helpers **helpers)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	/* Tests: a verifier that refuses the direct map's loads, as if it had */
	const char *refuse = getenv("ALYS_BPF_REFUSE_DIRECT_MAP");
	int err = refuse && *refuse && t->skel->rodata->direct_map_pfn_mask ?
		-EACCES : bpf_load(t->skel, helpers);

	/* The newer of the two given up first: a kernel with uprobe sessions
	 * whose verifier refuses the direct map's loads keeps its sessions. */
	if (err && t->skel->rodata->direct_map_pfn_mask)
		return load_again(t, helpers, &no_direct_map,
				  "stack reads through the direct map unavailable: stacks are copied");
	if (err && t->uprobe_sessions) {
		/* This kernel has no uprobe sessions (before Linux 6.13). */
		t->uprobe_sessions = false;
		return load_again(t, helpers, &no_uprobe_sessions,
				  "uprobe sessions unavailable: every call gets a return probe");
	}
	if (err) {
		report_load_error(err);
		return -1;
	}
	if (t->skel->rodata->direct_map_pfn_mask) {
		uint64_t base = direct_map_find(t->skel);

		if (t->o->verbose)
			say(t, base ? "stacks read through the direct map at 0x%llx\n"
				    : "direct map not found: stacks are copied\n",
			    (unsigned long long)base);
	} else if (t->o->verbose && !no_direct_map && t->o->unwind == ALYS_UNWIND_DWARF) {
		say(t, "stacks copied, not read through the direct map (5-level paging, "
		       "/proc/cpuinfo unreadable, or ALYS_BPF_NO_DIRECT_MAP set)\n");
	}
	if (t->o->verbose) {
		unsigned long long ms = (clock_ns(CLOCK_MONOTONIC) - t0) / 1000000;

		if (*helpers)
			say(t, "BPF programs loaded in %llu ms, verified on %d CPUs at once\n",
			    ms, bpf_helpers_count(*helpers));
		else
			say(t, "BPF programs loaded in %llu ms\n", ms);
		say_verified(t);
	}
	if (t->o->unwind == ALYS_UNWIND_DWARF && !unwind_maps_attached(t->um)) {
		char msg[PATH_MAX + 256];

		if (unwind_maps_attach(t->um, bpf_map__fd(t->skel->maps.unwind_rows),
				       bpf_map__fd(t->skel->maps.unwind_objects),
				       bpf_map__fd(t->skel->maps.unwind_procs),
				       bpf_map__max_entries(t->skel->maps.unwind_rows),
				       msg, sizeof(msg))) {
			fail("%s\n", msg);
			bpf_helpers_free(*helpers);
			*helpers = NULL;
			return -1;
		}
	}
	return 0;
}

int bpf_setup_open(struct session *t)
{
	struct bpf_slot_sizes sz = {
		.ringbuf_bytes = ringbuf_bytes(t),
		.tracked_small = ALYS_TRACKED_SMALL, .tracked_mid = ALYS_TRACKED_MID,
		/* A scan walks every bucket of the big map, when it holds
		 * any: keep it no bigger than the hblks it must hold (~16 ms
		 * per 1M buckets). */
		.tracked_big = t->sample_bytes || t->refill ? TRACKED_SAMPLED : TRACKED_ALL,
	};
	char err[512];
	struct bpf_helpers *helpers = NULL;
	struct bpf_group *g;
	int r = -1;

	if (no_uprobe_sessions)
		t->uprobe_sessions = false;
	if (configure_bpf(t))
		goto out;
	sz.stack_cache = t->skel->rodata->stack_cache_mask + 1;
	/* ALYS_BPF_NO_SHARE: an object a session, for comparison (bench/). */
	g = getenv("ALYS_BPF_NO_SHARE") ? NULL : bpf_pool_find(t->pool, t->skel);
	if (g) {
		alys_bpf__destroy(t->skel);
		if (t->o->verbose)
			say(t, "BPF programs shared with another session\n");
	} else {
		if (load_bpf(t, &helpers))
			goto out;
		g = bpf_pool_add(t->pool, t->skel, helpers, t->uprobe_sessions);
		if (!g) {
			t->skel = NULL;
			fail("out of memory for the BPF object\n");
			return -1;
		}
	}
	t->skel = NULL;
	if (bpf_slot_take(t->pool, g, &sz, &t->bs, err, sizeof(err))) {
		fail("%s\n", err);
		return -1;
	}
	t->skel = t->bs.skel;
	t->uprobe_sessions = t->bs.uprobe_sessions;
	return 0;
out:
	if (t->skel)
		alys_bpf__destroy(t->skel);
	t->skel = NULL;
	return r;
}
