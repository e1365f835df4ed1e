// SPDX-License-Identifier: MIT
#include "core/session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alys_events.h"	/* before the skeleton, which uses its types */
#include "alys.skel.h"
#include "core/bpf_pool.h"
#include "core/census_session.h"
#include "base/clock_ns.h"
#include "core/container_info.h"
#include "gc/gc_probes.h"
#include "core/launch.h"
#include "core/live_profile.h"
#include "gc/liveness_setup.h"
#include "base/ldso_list.h"
#include "lib/util.h"
#include "core/mmap_watch.h"
#include "core/proc_maps.h"
#include "core/record_sink.h"
#include "lib/target_file.h"
#include "core/refill_windows.h"
#include "core/session_link.h"
#include "lib/u64_table.h"
#include "unwind/stack_table.h"
#include "core/target.h"
#include "core/trace_writer.h"
#include "unwind/unwind_maps.h"

#define FLUSH_INTERVAL_NS (200 * 1000000ULL)
#define TRACKED_ALL (1u << 20)		/* hblks of followed blocks, all calls: 4 GiB */
#define TRACKED_SAMPLED (1u << 18)	/* sampled (one an hblk, mostly) */
/* --ringbuf-size's default: see bpf/alys.bpf.c */
#define RINGBUF_DEFAULT (64u << 20)
#define COUNTERS_INTERVAL_NS (1000 * 1000000ULL)
/* Detaching: how long the target's next GC call is waited for. */
#define END_SCAN_WAIT_NS (200 * 1000000ULL)

/* Counted by the daemon, after the BPF program's. */
enum {
	CNT_UNMAPPED_IP = ALYS_CNT_NR,	/* a frame in no known mapping */
	CNT_STACK_RESENT,	/* a stack sent again (evicted from the kernel's cache) */
	CNT_STACK_COLLISION,	/* two stack nodes with one 64-bit key: the later merged */
	CNT_STACK_ORPHAN,	/* a stack record below a node never sent: stack lost */
	CNT_STACK_UNKNOWN,	/* an event's stack key names no node: stack lost */
	CNT_STACK_NODES,	/* stack nodes written */
	CNT_DUTY_WINDOWS,	/* --duty: windows the refill probes were attached */
	CNT_DUTY_LATE,		/* --duty: windows missed or begun unattached */
	CNT_GC_BYTES,		/* --duty: the collector's count of bytes allocated */
	CNT_GC_BYTES_SAMPLED,	/* --duty: its growth inside the windows */
	CNT_GC_BYTES_SAMPLED_REALLOC,	/* --duty: inside those that probed GC_realloc */
	NR_COUNTERS
};

static const char *const counter_names[] = {
	[ALYS_CNT_RB_DROP_EVENT] = "ringbuf_drop_event",
	[ALYS_CNT_RB_DROP_STACK] = "ringbuf_drop_stack",
	[ALYS_CNT_STACK_SENT] = "stack_sent",
	[ALYS_CNT_DEPTH_OVERFLOW] = "depth_overflow",
	[ALYS_CNT_STACK_TRUNCATED] = "stack_truncated",
	[ALYS_CNT_UNWIND_NO_TABLE] = "unwind_no_table",
	[ALYS_CNT_UNWIND_BAD_READ] = "unwind_bad_read",
	[ALYS_CNT_TRACKED_FULL] = "tracked_full",
	[ALYS_CNT_LIVE_UNREADABLE] = "live_unreadable",
	[ALYS_CNT_LIVE_REUSED] = "live_reused",
	[ALYS_CNT_LIVE_MERGED] = "live_merged",
	[ALYS_CNT_RB_DROP_DEATH] = "ringbuf_drop_death",
	[ALYS_CNT_REFILL] = "refill",
	[ALYS_CNT_REFILL_CUT] = "refill_cut",
	[ALYS_CNT_REFILL_BAD_SIZE] = "refill_bad_size",
	[ALYS_CNT_REALLOC_IN_PLACE] = "realloc_in_place",
	[ALYS_CNT_DUTY_OUTSIDE] = "duty_outside",
	[ALYS_CNT_STACK_FRAMES_SENT] = "stack_frames_sent",
	[ALYS_CNT_FRAMES_REUSED] = "frames_reused",
	[ALYS_CNT_FRAMES_WALKED] = "frames_walked",
	[ALYS_CNT_STACK_PAGES_READ] = "stack_pages_read",
	[ALYS_CNT_UNWIND_SEARCHES] = "unwind_searches",
	[ALYS_CNT_STACK_WORDS_READ] = "stack_words_read",
	[ALYS_CNT_LIVE_EXIT_IN_GC] = "live_exit_in_gc",
	[ALYS_CNT_NO_THREAD_STATE] = "no_thread_state",
	[ALYS_CNT_RETURN_MISSED] = "return_missed",
	[CNT_UNMAPPED_IP] = "unmapped_ip",
	[CNT_STACK_RESENT] = "stack_resent",
	[CNT_STACK_COLLISION] = "stack_collision",
	[CNT_STACK_ORPHAN] = "stack_orphan",
	[CNT_STACK_UNKNOWN] = "stack_unknown",
	[CNT_STACK_NODES] = "stack_nodes",
	[CNT_DUTY_WINDOWS] = "duty_windows",
	[CNT_DUTY_LATE] = "duty_late",
	[CNT_GC_BYTES] = "gc_bytes",
	[CNT_GC_BYTES_SAMPLED] = "gc_bytes_sampled",
	[CNT_GC_BYTES_SAMPLED_REALLOC] = "gc_bytes_sampled_realloc",
};

struct session {
	const struct tracer_opts *o;
	struct target tg;
	struct alys_bpf *skel;		/* bs.skel: the programs, maybe shared */
	struct bpf_slot bs;		/* this session's slot in it */
	struct bpf_pool *pool;		/* own_pool, or the agent's */
	struct bpf_pool *own_pool;
	struct ring_buffer *rb;
	struct bpf_link *links[16];
	int nlinks;
	int session_fds[8];	/* uprobe-session and uprobe_multi links */
	int nsessions;
	bool uprobe_sessions;	/* attached as uprobe sessions (Linux 6.13+): see bpf/alys.bpf.c */
	bool multi;		/* uprobes as uprobe_multi links where kept (session_link.h) */
	bool refill_multi;	/* so are the refill probes */
	struct unwind_maps *um;		/* the pool's */
	struct record_sink sink;	/* the trace writer, stacks, blocks held */
	struct proc_maps maps;
	struct mmap_watch mw;
	bool want_live;
	struct live_profile *lp;	/* --interval, --http, --push: the profile so far */
	uint64_t start_ns;
	struct launch launch;
	struct invoker inv;
	int pidfd;
	bool launched;
	bool exited;
	bool maps_gone;
	int exit_status;
	uint64_t last_flush, last_counters;
	struct liveness_setup live;
	uint64_t counters[NR_COUNTERS];
	char output[PATH_MAX];
	struct container_info ci;	/* of the target, read at start */
	bool census_only;		/* --census without --sample: no allocation probes */
	uint64_t sample_bytes;		/* bytes:N in effect (0: none) */
	bool refill;			/* --sample refill in effect */
	bool refill_fell_back;		/* asked for, but the slow paths were not found */
	unsigned duty_pct;		/* refill probes attached this share of the time */
	struct refill_windows rw;	/* the refill probes, in --duty windows */
	bool refill_announced;		/* -v named their probe points */
	struct census_session census;
};

#define say(t, ...) say_unless((t)->o->quiet, __VA_ARGS__)

/* Every probe's attach cookie carries the session's slot in its top byte:
 * the programs may serve other sessions too (bpf_pool.h). */
static __u64 slot_cookie(const struct session *t)
{
	return (__u64)t->bs.slot << ALYS_COOKIE_SLOT_SHIFT;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || level == LIBBPF_INFO)
		return 0;
	if (getenv("ALYS_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

int session_check_privileges(void)
{
	if (geteuid() != 0) {
		fail("must run as root to load BPF programs and attach uprobes "
		     "(CAP_BPF, CAP_PERFMON): run it with sudo\n");
		return -1;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fail("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): "
		     "alys-bpf needs a kernel built with CONFIG_DEBUG_INFO_BTF=y "
		     "(Debian 12's kernels are)\n");
		return -1;
	}
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

/* Whether the target's files are out of reach because it is exiting:
 * /proc/PID/root and map_files of a zombie (or of a reaped pid) cannot be
 * followed. */
static bool target_gone(const struct session *t, const char *path)
{
	char dir[64], root[80];
	int n = snprintf(dir, sizeof(dir), "/proc/%d/", t->tg.pid);

	snprintf(root, sizeof(root), "%sroot/", dir);
	return n > 0 && !strncmp(path, dir, (size_t)n) && access(root, F_OK);
}

static void add_unwind_table(struct session *t, const char *path)
{
	char err[PATH_MAX + 256];

	if (t->o->unwind != ALYS_UNWIND_DWARF)
		return;
	/* a library seen mapped as the target exits: no stack will need it */
	if (unwind_maps_add(t->um, path, err, sizeof(err)) && !target_gone(t, path))
		say(t, "warning: %s: stacks through it will stop there\n", err);
}

static int add_mapped_unwind_table(const struct maps_line *l, void *arg)
{
	struct session *t = arg;

	if (maps_line_is_exec_file(l))
		add_unwind_table(t, l->file);
	return 0;
}

/* Tables for everything the target has or will have mapped at start. */
static void build_unwind_tables(struct session *t)
{
	if (t->o->unwind != ALYS_UNWIND_DWARF || t->o->empty_probes)
		return;
	if (t->o->argv) {
		add_unwind_table(t, t->tg.exe);
		for (size_t i = 0; i < t->tg.libs.n; i++)
			add_unwind_table(t, t->tg.libs.paths[i]);
	} else {
		proc_maps_each(t->tg.pid, add_mapped_unwind_table, t);
	}
	if (t->o->verbose) {
		size_t files, rows;
		uint64_t ns;

		unwind_maps_stats(t->um, &files, &rows, &ns);
		say(t, "unwind tables: %zu files, %zu rows, built in %.0f ms\n", files, rows,
		    ns / 1e6);
	}
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
	case EACCES:
		fail("cannot load the BPF program: the kernel refused bpf(2) (%s): "
		     "alys-bpf needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): run it as "
		     "root with sudo, outside a container or in one granted these "
		     "capabilities, and with kernel lockdown off\n", strerror(-err));
		break;
	default:
		fail("cannot load the BPF program into the kernel: %s.\n"
		     "  Is BPF enabled (CONFIG_BPF_SYSCALL) and not locked down? "
		     "Set ALYS_BPF_DEBUG=1 to see the verifier's log.\n", strerror(-err));
	}
}

/* --sample refill's probes: the refill point, GC_malloc_kind_global's entry
 * and return (medium and large objects: the block's address is its
 * return), and last GC_realloc's entry (not in every window). */
#define REFILL_PROBES 4

struct refill_attach {
	struct bpf_program *prog;
	const struct gc_func *f;
	bool ret;
};

static void refill_probes(struct session *t, struct refill_attach p[REFILL_PROBES])
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

/* Sampled calls with an unsampled majority are cheapest as uprobe
 * sessions: the kernel skips the return probe of calls the entry did not
 * sample. The sessions' programs, or the classic entry and return ones, are
 * loaded, not both; and only the programs attached (attach_probes): each
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
	bpf_program__set_autoload(s->progs.empty_entry, t->o->empty_probes);
	bpf_program__set_autoload(s->progs.empty_return, t->o->empty_probes);
	bpf_program__set_autoload(s->progs.census_setcb_entry, t->o->census_every != 0);
	bpf_program__set_autoload(s->progs.census_trigger, t->o->census_every != 0);
	/* The refill probes, GC_gcollect's and the end scan's as uprobe_multi
	 * links where the kernel has them (6.6+; session_link.h): no perf
	 * event, whose making and closing queue on a host-wide mutex.
	 * ALYS_BPF_NO_MULTI: as perf uprobes, for comparison. */
	t->multi = !getenv("ALYS_BPF_NO_MULTI") && uprobe_multi_supported();
	t->refill_multi = t->refill && t->multi;
	if (t->multi) {
		bpf_program__set_expected_attach_type(s->progs.gc_collect_entry,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.end_scan_entry,
			(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
	}
	if (t->refill_multi) {
		struct refill_attach probes[REFILL_PROBES];

		refill_probes(t, probes);
		for (size_t i = 0; i < REFILL_PROBES; i++)
			bpf_program__set_expected_attach_type(probes[i].prog,
				(enum bpf_attach_type)ALYS_BPF_TRACE_UPROBE_MULTI);
	}
	t->skel->rodata->setcb_vaddr = t->tg.gp.setcb.probe_vaddr;
	t->skel->rodata->session_mode = t->uprobe_sessions;
}

/* Refill sampling where the slow paths can be probed; bytes:512K where not,
 * said once: a user who asked for a cheap probe gets a dearer one. */
static void choose_sampling(struct session *t)
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

static const char *live_mode_name(const struct session *t)
{
	return liveness_mode_name(&t->live, t->bs.st ? t->bs.st->live_state : 0);
}

static void check_live_state(struct session *t)
{
	liveness_check_state(&t->live, t->bs.st->live_state, t->bs.st->live_verified,
			     t->bs.st->live_mismatched,
			     t->tg.gp.name);
}

static uint32_t ringbuf_bytes(const struct session *t)
{
	return t->o->ringbuf_size ? t->o->ringbuf_size : RINGBUF_DEFAULT;
}

/* The kernel refused the uprobe-session programs once (before Linux 6.13):
 * later sessions are configured without them, as the object loaded was. */
static bool no_uprobe_sessions;

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

/* t->skel, configured, loaded into the kernel: 0 or -1 (said; t->skel
 * destroyed). */
static int load_bpf(struct session *t)
{
	int err = alys_bpf__load(t->skel);

	if (err && t->uprobe_sessions) {
		/* This kernel has no uprobe sessions (before Linux 6.13). */
		alys_bpf__destroy(t->skel);
		t->skel = NULL;
		t->uprobe_sessions = false;
		no_uprobe_sessions = true;
		if (t->o->verbose)
			say(t, "uprobe sessions unavailable: every call gets a return probe\n");
		if (configure_bpf(t))
			return -1;
		return load_bpf(t);
	}
	if (err) {
		report_load_error(err);
		return -1;
	}
	if (t->o->unwind == ALYS_UNWIND_DWARF && !unwind_maps_attached(t->um)) {
		char msg[PATH_MAX + 256];

		if (unwind_maps_attach(t->um, bpf_map__fd(t->skel->maps.unwind_rows),
				       bpf_map__fd(t->skel->maps.unwind_objects),
				       bpf_map__fd(t->skel->maps.unwind_procs),
				       bpf_map__max_entries(t->skel->maps.unwind_rows),
				       msg, sizeof(msg))) {
			fail("%s\n", msg);
			return -1;
		}
	}
	return 0;
}

/* The programs: those of a loaded object configured alike if the pool has
 * one with room (the agent's other processes), else loaded now; and a slot
 * in it with this session's maps. 0 or -1 (said). */
static int open_bpf(struct session *t)
{
	struct bpf_slot_sizes sz = {
		.ringbuf_bytes = ringbuf_bytes(t),
		.tracked_small = ALYS_TRACKED_SMALL, .tracked_mid = ALYS_TRACKED_MID,
		/* A scan walks every bucket of the big map, when it holds
		 * any: keep it no bigger than the hblks it must hold (~16 ms
		 * per 1M buckets). */
		.tracked_big = t->sample_bytes || t->refill ? TRACKED_SAMPLED : TRACKED_ALL,
	};
	char err[256];
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
		if (load_bpf(t))
			goto out;
		g = bpf_pool_add(t->pool, t->skel, t->uprobe_sessions);
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

/* A uprobe (or uretprobe) at f's probe point. */
static struct bpf_link *attach_link(struct session *t, struct bpf_program *prog,
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

/* attach_link as a uprobe_multi link: its fd, or -1. */
static int attach_multi(struct session *t, struct bpf_program *prog, const struct gc_func *f,
			bool ret, bool announce)
{
	int fd = uprobe_multi_link_create(bpf_program__fd(prog), ALYS_BPF_TRACE_UPROBE_MULTI,
					  ret ? ALYS_BPF_F_UPROBE_MULTI_RETURN : 0, t->tg.gp.path,
					  f->probe_file_off, slot_cookie(t), t->tg.pid);

	if (fd < 0) {
		attach_failed(t, f, -fd);
		return -1;
	}
	if (announce)
		announce_probe(t, f, ret);
	return fd;
}

/* A probe kept until finish(). */
static int attach_one(struct session *t, struct bpf_program *prog, const struct gc_func *f,
		      bool ret, __u64 cookie)
{
	struct bpf_link *link = attach_link(t, prog, f, ret, cookie, true);

	if (!link)
		return -1;
	t->links[t->nlinks++] = link;
	return 0;
}

/* --sample refill's probes (refill_probes), GC_realloc's if with_realloc.
 * refill_windows.c detaches them. */
static int attach_refill(void *ctx, bool with_realloc, struct probe_link *links, int *n)
{
	struct session *t = ctx;
	bool announce = !t->refill_announced;
	struct refill_attach probes[REFILL_PROBES];
	size_t nprobes = REFILL_PROBES - !(with_realloc && t->tg.gp.funcs[ALYS_KIND_REALLOC].found);

	refill_probes(t, probes);
	*n = 0;
	for (size_t i = 0; i < nprobes; i++) {
		links[*n] = (struct probe_link){ NULL, -1 };
		if (t->refill_multi)
			links[*n].fd = attach_multi(t, probes[i].prog, probes[i].f, probes[i].ret,
						    announce);
		else
			links[*n].link = attach_link(t, probes[i].prog, probes[i].f, probes[i].ret,
						     0, announce);
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

static int attach_probes(struct session *t)
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
		if (attach_one(t, t->o->empty_probes ? s->progs.empty_entry
				 : alloc ? s->progs.gc_alloc_entry : s->progs.gc_free_entry,
			       &f[k], false, alloc ? alloc_cookie(t, k) : 0))
			return -1;
		if (alloc &&
		    attach_one(t, t->o->empty_probes ? s->progs.empty_return
						     : s->progs.gc_alloc_return, &f[k], true, 0))
			return -1;
	}
	if (t->live.mode == ALYS_LIVE_MARKS && t->tg.gp.collect.found && !t->o->empty_probes) {
		if (!t->multi) {
			if (attach_one(t, s->progs.gc_collect_entry, &t->tg.gp.collect, false, 0))
				return -1;
		} else {
			int fd = attach_multi(t, s->progs.gc_collect_entry, &t->tg.gp.collect,
					      false, true);

			if (fd < 0)
				return -1;
			t->session_fds[t->nsessions++] = fd;
		}
	}
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

static void write_counters(struct session *t)
{
	bpf_slot_counters(&t->bs, t->counters);
	t->counters[ALYS_CNT_LIVE_REUSED] = t->sink.live_reused;
	t->counters[CNT_STACK_RESENT] = t->sink.stacks.resent;
	t->counters[CNT_STACK_COLLISION] = t->sink.stacks.collisions;
	t->counters[CNT_STACK_ORPHAN] = t->sink.stacks.orphans;
	t->counters[CNT_STACK_UNKNOWN] = t->sink.stacks.unknown;
	t->counters[CNT_STACK_NODES] = t->sink.stacks.nodes;
	t->counters[CNT_DUTY_WINDOWS] = t->rw.duty.windows;
	t->counters[CNT_DUTY_LATE] = t->rw.duty.late;
	if (t->refill && t->duty_pct < 100)
		refill_windows_totals(&t->rw, &t->counters[CNT_GC_BYTES],
				      &t->counters[CNT_GC_BYTES_SAMPLED],
				      &t->counters[CNT_GC_BYTES_SAMPLED_REALLOC]);
	trace_writer_counters(&t->sink.w, counter_names, t->counters, NR_COUNTERS);
}

static void on_mapping(void *ctx, const struct mmap_info *mi)
{
	struct session *t = ctx;

	if (mi->pid != t->tg.pid)
		return;
	if (mi->exec) {
		proc_maps_forget(&t->maps);
	} else if (proc_maps_add(&t->maps, &t->sink.w, mi->start, mi->end, mi->offset,
				 mi->path, mi->build_id, mi->build_id_len) > 0 &&
		   !mapping_is_anon(mi->path)) {
		char file[PATH_MAX + 64];

		/* A library loaded late (dlopen): its rows were not built yet. */
		add_unwind_table(t, target_file(t->tg.pid, mi->start, mi->end, mi->path, file,
						sizeof(file)));
	}
}

/* The kernel reports mappings as they are made; a stack can still arrive
 * before the report of a library mapped just now: drain once more, then
 * ask /proc while the process lives. */
static void cover_stack(void *ctx, const uint64_t *ips, uint32_t nr)
{
	struct session *t = ctx;
	bool refreshed = false;

	for (uint32_t i = 0; i < nr; i++) {
		if (proc_maps_covers(&t->maps, ips[i]))
			continue;
		if (!refreshed) {
			refreshed = true;
			mmap_watch_drain(&t->mw, on_mapping, t);
			if (!t->maps_gone && !proc_maps_covers(&t->maps, ips[i]) &&
			    proc_maps_refresh(&t->maps, &t->sink.w) < 0)
				t->maps_gone = true;
			if (proc_maps_covers(&t->maps, ips[i]))
				continue;
		}
		t->counters[CNT_UNMAPPED_IP]++;
	}
}

/* A block whose allocation event the trace holds and that no free ended. */
static int census_recorded(void *arg, uint64_t addr)
{
	struct session *t = arg;

	return record_sink_holds(&t->sink, addr);
}

static void census_stop(void *ctx, const struct alys_rb_census *c)
{
	struct session *t = ctx;

	census_session_on_stop(&t->census, c, t->exited);
}

static void reap(struct session *t)
{
	siginfo_t si;

	t->exited = true;
	if (!t->launched)
		return;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, t->tg.pid, &si, WEXITED) == 0)
		t->exit_status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

int session_start(struct session *t)
{
	char err[PATH_MAX + 256];
	char sample[64] = "all";
	struct trace_writer_header h = {
		.unwind = t->o->unwind == ALYS_UNWIND_FP ? "fp" : "dwarf",
		.max_frames = t->o->max_frames,
		.sample = sample,
		.liveness = live_mode_name(t),
		.sample_why = t->refill_fell_back ? t->tg.gp.refill_why : NULL,
	};

	if (!strcmp(h.liveness, "reuse") && t->tg.gp.layout_why[0])
		h.liveness_why = t->tg.gp.layout_why;

	if (t->sample_bytes)
		snprintf(sample, sizeof(sample), "bytes:%llu",
			 (unsigned long long)t->sample_bytes);
	else if (t->refill && t->duty_pct < 100)
		snprintf(sample, sizeof(sample), "refill duty:%u%%", t->duty_pct);
	else if (t->refill)
		snprintf(sample, sizeof(sample), "refill");

	t->sink.sample_bytes = t->sample_bytes;
	t->sink.live_state = t->live.mode == ALYS_LIVE_MARKS ? &t->bs.st->live_state : NULL;
	t->sink.tool = (struct record_sink_tool){ .ctx = t, .new_frames = cover_stack,
						  .census_stop = census_stop };
	t->rb = ring_buffer__new(t->bs.events_fd, record_sink_on_record, &t->sink, NULL);
	if (!t->rb) {
		fail("cannot set up the ring buffer: %s\n", strerror(errno));
		return -1;
	}
	t->maps.pid = t->tg.pid;
	if (t->output[0]) {
		if (t->inv.drop)
			file_keep_owner(t->inv.uid, t->inv.gid);
		proc_maps_keep_files(&t->maps, t->o->debug_dir, t->output, t->o->quiet);
	}
	if (t->o->census_every)
		t->census = (struct census_session){
			.pid = t->tg.pid, .gp = &t->tg.gp, .w = &t->sink.w, .verbose = t->o->verbose,
			.trigger_prog = t->skel->progs.census_trigger,
			.trigger_cookie = slot_cookie(t),
			.trigger_gc_no_addr = &t->bs.st->census_gc_no_addr,
			.trigger_every = &t->bs.st->census_every,
			.every = t->o->census_every,
			.recorded = t->census_only ? NULL : census_recorded, .recorded_arg = t,
		};
	t->pidfd = (int)syscall(SYS_pidfd_open, t->tg.pid, 0);
	if (t->pidfd < 0) {
		fail("pid %d: %s\n", t->tg.pid, errno == ESRCH ? "the process has exited" : strerror(errno));
		return -1;
	}
	if ((t->launched ? mmap_watch_launch(&t->mw, t->tg.pid, err, sizeof(err))
			 : mmap_watch_attach(&t->mw, t->tg.pid, err, sizeof(err)))) {
		fail("%s\n", err);
		return -1;
	}
	/* The trace starts before the first probe can fire: an attached
	 * process allocates while the others are being attached. */
	h.start_ns = clock_ns(CLOCK_MONOTONIC);
	h.start_unix_ns = clock_ns(CLOCK_REALTIME);
	t->start_ns = t->last_flush = t->last_counters = h.start_ns;
	if (attach_probes(t))
		return -1;
	if (trace_writer_open(&t->sink.w, t->output[0] ? t->output : NULL,
			      t->inv.drop ? t->inv.uid : (uid_t)-1,
			      t->inv.drop ? t->inv.gid : (gid_t)-1, err, sizeof(err))) {
		fail("%s\n", err);
		return -1;
	}
	h.pid = t->tg.pid;
	h.exe = t->tg.exe;
	h.argv = t->o->argv;
	if (container_info_read(t->tg.pid, &t->ci))
		h.container = &t->ci;
	if (t->want_live) {
		char name[64];

		snprintf(name, sizeof(name), "pid %d", t->tg.pid);
		t->lp = live_profile_new(name);
		if (!t->lp) {
			fail("out of memory for the live profile\n");
			return -1;
		}
		trace_writer_tap(&t->sink.w, &live_profile_tool, t->lp);
	}
	trace_writer_header(&t->sink.w, &h);
	if (!t->launched)
		proc_maps_refresh(&t->maps, &t->sink.w);
	trace_writer_flush(&t->sink.w);
	say(t, "tracing pid %d (%s), libgc %s %s\n", t->tg.pid, t->tg.exe,
	    t->tg.gp.in_executable ? "linked into" : "from",
	    t->tg.gp.in_executable ? "the executable" : t->tg.gp.name);
	return 0;
}

static const char *duty_summary(struct session *t)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), " in %llu windows covering %u%% of the time (%llu late)",
		 (unsigned long long)t->rw.duty.windows, t->duty_pct,
		 (unsigned long long)t->rw.duty.late);
	return buf;
}

/* Detaching: the collections since the last scan (the time budget skips
 * most) would go unread and their dead show as in use. The target's next
 * GC call reads the last one's marks: wait for it a little. */
static void request_end_scan(struct session *t)
{
	const enum alys_kind kinds[] = { ALYS_KIND_MALLOC, ALYS_KIND_MALLOC_ATOMIC };
	struct probe_link links[2];
	uint64_t until;
	int n = 0;

	if (t->exited || t->live.mode != ALYS_LIVE_MARKS || t->o->empty_probes ||
	    !t->sink.collections)
		return;
	/* With --sample refill only the slow paths are probed (and, with
	 * --duty, maybe not now): the allocation entries call maybe_scan for
	 * the wait. Other modes probe them already. */
	for (size_t i = 0; t->refill && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct gc_func *f = &t->tg.gp.funcs[kinds[i]];
		struct bpf_program *prog = t->skel->progs.end_scan_entry;

		if (!f->found)
			continue;
		links[n] = (struct probe_link){ NULL, -1 };
		if (t->multi)
			links[n].fd = attach_multi(t, prog, f, false, false);
		else
			links[n].link = attach_link(t, prog, f, false, 0, false);
		if (links[n].link || links[n].fd >= 0)
			n++;
	}
	t->bs.st->live_end_request = 1;
	until = clock_ns(CLOCK_MONOTONIC) + END_SCAN_WAIT_NS;
	while (!t->sink.end_scanned && clock_ns(CLOCK_MONOTONIC) < until)
		ring_buffer__poll(t->rb, 10);
	while (n > 0) {
		n--;
		if (links[n].link)
			bpf_link__destroy(links[n].link);
		else
			close(links[n].fd);
	}
	if (!t->sink.end_scanned) {
		t->bs.st->live_end_request = 0;
		say(t, "note: the target made no GC call in the %d ms after the detach: "
		    "collections after %llu were not read (blocks that died in them show as "
		    "in use)\n", (int)(END_SCAN_WAIT_NS / 1000000),
		    (unsigned long long)t->bs.st->live_scanned_gc);
	}
}

void session_finish(struct session *t)
{
	const char *reason = t->exited ? "exit" : "signal";
	char written[PATH_MAX + 64];
	struct stat st;

	request_end_scan(t);
	for (int i = 0; i < t->nlinks; i++)
		bpf_link__destroy(t->links[i]);
	t->nlinks = 0;
	census_session_detach(&t->census);
	refill_windows_stop(&t->rw);
	for (int i = 0; i < t->nsessions; i++)
		close(t->session_fds[i]);
	t->nsessions = 0;
	/* Everything submitted before the detach is still in the buffers. */
	mmap_watch_drain(&t->mw, on_mapping, t);
	ring_buffer__consume(t->rb);
	check_live_state(t);
	write_counters(t);
	trace_writer_end(&t->sink.w, reason, t->exit_status,
			 clock_ns(CLOCK_MONOTONIC), live_mode_name(t));
	if (trace_writer_close(&t->sink.w))
		fail("error writing %s: %s: the trace is incomplete\n",
		     t->output[0] ? t->output : "the live profile", strerror(t->sink.w.error));
	if (t->lp)
		live_profile_detached(t->lp);
	if (t->counters[ALYS_CNT_RB_DROP_EVENT] || t->counters[ALYS_CNT_RB_DROP_STACK])
		fail("warning: the ring buffer overflowed: %llu events and %llu stacks were lost "
		     "(counted in the trace)\n",
		     (unsigned long long)t->counters[ALYS_CNT_RB_DROP_EVENT],
		     (unsigned long long)t->counters[ALYS_CNT_RB_DROP_STACK]);
	if (t->counters[ALYS_CNT_NO_THREAD_STATE])
		fail("warning: %llu allocation calls were not traced: the kernel could not allocate "
		     "their thread's state (memory short? counted in the trace)\n",
		     (unsigned long long)t->counters[ALYS_CNT_NO_THREAD_STATE]);
	if (t->counters[CNT_STACK_COLLISION])
		fail("warning: %llu stack nodes shared a 64-bit key with another: their events "
		     "are attributed to the first (counted in the trace)\n",
		     (unsigned long long)t->counters[CNT_STACK_COLLISION]);
	if (t->counters[CNT_STACK_ORPHAN] || t->counters[CNT_STACK_UNKNOWN])
		fail("warning: %llu stack records and %llu events referred to stack nodes never "
		     "received: those events have no stack (counted in the trace; please report)\n",
		     (unsigned long long)t->counters[CNT_STACK_ORPHAN],
		     (unsigned long long)t->counters[CNT_STACK_UNKNOWN]);
	if (!t->output[0] || stat(t->output, &st))
		st.st_size = 0;
	if (t->exited && t->live.mode == ALYS_LIVE_MARKS && !t->sink.end_scanned && t->sink.collections)
		say(t, "note: the target %s: the collections after %llu were not read "
		    "(blocks that died in them show as in use)\n",
		    t->counters[ALYS_CNT_LIVE_EXIT_IN_GC] ? "exited inside a GC call" :
		    "ended without exit (a signal?)",
		    (unsigned long long)t->bs.st->live_scanned_gc);
	if (t->live.mode != ALYS_LIVE_OFF)
		say(t, "liveness (%s): %llu blocks found dead over %llu collections read"
		    " (%llu more read together with a later one)\n",
		    live_mode_name(t), (unsigned long long)t->sink.deaths,
		    (unsigned long long)t->sink.collections,
		    (unsigned long long)t->counters[ALYS_CNT_LIVE_MERGED]);
	if (t->refill)
		say(t, "sampling: refill, %llu free-list refills recorded%s\n",
		    (unsigned long long)t->counters[ALYS_CNT_REFILL],
		    t->duty_pct < 100 ? duty_summary(t) : "");
	if (t->counters[ALYS_CNT_RETURN_MISSED])
		say(t, "note: %llu times a thread's GC call ended without its return probe firing "
		    "(the kernel's uretprobe missed it, seen with several threads allocating): "
		    "those calls are not in the trace (counted: return_missed)\n",
		    (unsigned long long)t->counters[ALYS_CNT_RETURN_MISSED]);
	if (t->counters[ALYS_CNT_REFILL_BAD_SIZE])
		fail("warning: %llu refills read a size of 0 or above 4096 bytes where %s "
		     "keeps the request, and were dropped: the refill probe does not fit this "
		     "libgc build; trace with --sample bytes:N and report it\n",
		     (unsigned long long)t->counters[ALYS_CNT_REFILL_BAD_SIZE],
		     t->tg.gp.refill.size_reg >= 0 ? "a register" : "a stack slot");
	if (t->maps.kept.files)
		say(t, "kept %llu mapped files (%.1f MiB, %.0f ms) in %s, where alys_converter "
		    "finds them: %s\n", (unsigned long long)t->maps.kept.files,
		    t->maps.kept.bytes / 1048576.0, t->maps.kept.ns / 1e6, t->maps.keep_dir,
		    t->maps.keep_all ? "the target runs in another root (a container), whose "
		    "files go with it" : "this machine has not them by the paths they were "
		    "mapped at");
	if (t->output[0])
		snprintf(written, sizeof(written), "%.1f MiB written to %s",
			 st.st_size / 1048576.0, t->output);
	else
		snprintf(written, sizeof(written), "no trace file (--http without -o)");
	if (t->o->agent)	/* one of many: which */
		snprintf(written, sizeof(written), "pid %d (%s)", t->tg.pid, t->tg.exe);
	say(t, "%s: %llu events, %llu stacks (%llu nodes), %s\n",
	    t->exited ? "target exited" : "detached",
	    (unsigned long long)t->sink.w.events, (unsigned long long)t->sink.stacks.distinct,
	    (unsigned long long)t->sink.stacks.nodes, written);
}


static void default_output(char *out, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%S.alys", &tm);
}

struct session *session_new(const struct tracer_opts *o, struct bpf_pool *pool, bool live)
{
	struct session *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->o = o;
	t->pidfd = -1;
	t->launch = (struct launch){ .go_fd = -1, .err_fd = -1 };
	invoker_from_env(&t->inv, o->as_root);
	if (o->output)
		snprintf(t->output, sizeof(t->output), "%s", o->output);
	else if (!o->http_addr && !o->agent)	/* live only: no file */
		default_output(t->output, sizeof(t->output));
	t->bs.events_fd = -1;
	if (!pool) {
		t->own_pool = pool = bpf_pool_new();
		if (!pool) {
			free(t);
			return NULL;
		}
	}
	t->pool = pool;
	t->um = bpf_pool_unwind_maps(pool);
	proc_maps_init(&t->maps, 0);
	t->want_live = live;
	return t;
}

int session_from_command(struct session *t)
{
	char err[PATH_MAX + 256];
	int r = target_from_command(&t->tg, t->o->argv[0], t->o->quiet, err, sizeof(err));

	if (r)
		fail("%s\n", err);
	return r;
}

int session_from_pid(struct session *t, pid_t pid)
{
	char err[PATH_MAX + 256];

	if (target_from_pid(&t->tg, pid, err, sizeof(err))) {
		fail("%s\n", err);
		return 1;
	}
	return 0;
}

int session_load(struct session *t)
{
	const struct tracer_opts *o = t->o;

	build_unwind_tables(t);
	t->census_only = o->census_every && o->sample == SAMPLE_DEFAULT;
	choose_sampling(t);
	if (o->census_every) {
		char err[PATH_MAX + 512];

		if (census_session_check(&t->tg.gp, o->argv != NULL, err, sizeof(err))) {
			fail("%s\n", err);
			return -1;
		}
	}
	t->live = (struct liveness_setup){ .verbose = o->verbose, .quiet = o->quiet };
	liveness_choose(&t->live, &t->tg.gp, o->no_liveness || o->empty_probes || t->census_only);
	/* ALYS_BPF_NO_SESSIONS=1: behave as on kernels without uprobe
	 * sessions (tests and benchmarks compare the two). */
	t->uprobe_sessions = t->sample_bytes && !o->empty_probes && !getenv("ALYS_BPF_NO_SESSIONS");
	return open_bpf(t);
}

int session_launch(struct session *t)
{
	char err[PATH_MAX + 256];

	if (launch_fork(&t->launch, t->tg.exe, t->o->argv, &t->inv, err, sizeof(err))) {
		fail("%s\n", err);
		return -1;
	}
	t->tg.pid = t->launch.pid;
	t->launched = true;
	return 0;
}

struct launch *session_launched(struct session *t)
{
	return t->launched ? &t->launch : NULL;
}

int session_rb_fd(const struct session *t)
{
	return t->rb ? ring_buffer__epoll_fd(t->rb) : -1;
}

int session_pidfd(const struct session *t)
{
	return t->pidfd;
}

int session_live_wake_fd(const struct session *t)
{
	return t->lp ? live_profile_wake_fd(t->lp) : -1;
}

int session_timeout(struct session *t, uint64_t now)
{
	/* Events are submitted without waking the reader: poll at a short
	 * period, woken early only when the buffer fills. */
	int timeout = t->refill ? refill_windows_step(&t->rw, now) : 50;

	/* A window's attach that found the process exiting is no failure:
	 * its exit is read at the next step (the pidfd says so within ms). */
	if (timeout < 0 && t->pidfd >= 0 &&
	    poll(&(struct pollfd){ .fd = t->pidfd, .events = POLLIN }, 1, 200) == 1)
		return 0;
	if (timeout < 0)
		fail("pid %d: cannot attach the refill probes again; stopping\n", t->tg.pid);
	return timeout;
}

int session_step(struct session *t, uint64_t now, bool flush)
{
	/* an HTTP reader: everything up to now first */
	bool want_live = t->lp && live_profile_wanted(t->lp);

	mmap_watch_drain(&t->mw, on_mapping, t);
	ring_buffer__consume(t->rb);
	check_live_state(t);
	refill_windows_poll(&t->rw);
	if (!t->lp && now - t->last_counters > COUNTERS_INTERVAL_NS) {
		write_counters(t);
		t->last_counters = now;
	}
	if (want_live || flush || now - t->last_flush > FLUSH_INTERVAL_NS) {
		/* A live profile divides --duty weights by the windows' share
		 * of the same moment: counters with every flush. */
		if (t->lp)
			write_counters(t);
		if (trace_writer_flush(&t->sink.w)) {
			fail("cannot write %s: %s; stopping\n", t->output, strerror(t->sink.w.error));
			return -1;
		}
		t->last_flush = now;
	}
	if (want_live)
		live_profile_caught_up(t->lp);
	return 0;
}

bool session_exited(struct session *t)
{
	if (!t->exited && t->pidfd >= 0 &&
	    poll(&(struct pollfd){ .fd = t->pidfd, .events = POLLIN }, 1, 0) == 1)
		reap(t);
	return t->exited;
}

int session_exit_status(const struct session *t)
{
	return t->exit_status;
}

pid_t session_pid(const struct session *t)
{
	return t->tg.pid;
}

const char *session_exe(const struct session *t)
{
	return t->tg.exe;
}

const struct gc_probes *session_gc(const struct session *t)
{
	return &t->tg.gp;
}

struct trace_writer *session_writer(struct session *t)
{
	return &t->sink.w;
}

const struct container_info *session_container(const struct session *t)
{
	return &t->ci;
}

const char *session_output(const struct session *t)
{
	return t->output;
}

struct live_profile *session_live_profile(struct session *t)
{
	return t->lp;
}

struct live_profile *session_take_live_profile(struct session *t)
{
	struct live_profile *lp = t->lp;

	t->lp = NULL;
	return lp;
}

uint64_t session_start_ns(const struct session *t)
{
	return t->start_ns;
}

void session_free(struct session *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nlinks; i++)
		bpf_link__destroy(t->links[i]);
	census_session_detach(&t->census);
	refill_windows_stop(&t->rw);
	for (int i = 0; i < t->nsessions; i++)
		close(t->session_fds[i]);
	ring_buffer__free(t->rb);
	/* its probes are gone: the slot may serve another process */
	bpf_slot_give_back(t->pool, &t->bs);
	bpf_pool_free(t->own_pool);
	proc_maps_free(&t->maps);
	record_sink_free(&t->sink);
	mmap_watch_close(&t->mw);
	target_free(&t->tg);
	live_profile_free(t->lp);
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t);
}
