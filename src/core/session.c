// SPDX-License-Identifier: MIT
#include "core/session_priv.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "alys_events.h"	/* before the skeleton, which uses its types */
#include "alys.skel.h"
#include "base/clock_ns.h"
#include "gc/gc_probes.h"
#include "core/link_reaper.h"
#include "core/live_profile.h"
#include "base/ldso_list.h"
#include "lib/target_file.h"
#include "lib/util.h"
#include "unwind/stack_table.h"
#include "core/trace_writer.h"
#include "unwind/unwind_maps.h"

#define FLUSH_INTERVAL_NS (200 * 1000000ULL)
#define COUNTERS_INTERVAL_NS (1000 * 1000000ULL)
/* Detaching: how long the target's next GC call is waited for. */
#define END_SCAN_WAIT_NS (200 * 1000000ULL)

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
	[ALYS_CNT_STACK_SPANS_READ] = "stack_spans_read",
	[ALYS_CNT_STACK_SPAN_BYTES] = "stack_span_bytes",
	[ALYS_CNT_STACK_SPANS_MAPPED] = "stack_spans_mapped",
	[ALYS_CNT_WALKS_IN_PLACE] = "walks_in_place",
	[ALYS_CNT_GC_NO_READS] = "gc_no_reads",
	[ALYS_CNT_PREDICTED] = "calls_predicted",
	[ALYS_CNT_PREDICT_CHECKED] = "predictions_checked",
	[ALYS_CNT_PREDICT_WRONG] = "predictions_wrong",
	[ALYS_CNT_RB_DROP_PAUSE] = "ringbuf_drop_pause",
	[ALYS_CNT_RB_DROP_GROW] = "ringbuf_drop_grow",
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
	[CNT_MEMORY_SAMPLES] = "memory_samples",
	[CNT_MEMORY_SAMPLE_NS] = "memory_sample_ns",
	[CNT_DUTY_LATE] = "duty_late",
	[CNT_GC_BYTES] = "gc_bytes",
	[CNT_GC_BYTES_SAMPLED] = "gc_bytes_sampled",
	[CNT_GC_BYTES_SAMPLED_REALLOC] = "gc_bytes_sampled_realloc",
};

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

static void unwind_table_failed(void *arg, const char *path, const char *err)
{
	struct session *t = arg;

	/* a library seen mapped as the target exits: no stack will need it */
	if (!target_gone(t, path))
		say(t, "warning: %s: stacks through it will stop there\n", err);
}

static void add_unwind_table(struct session *t, const char *path)
{
	if (t->o->unwind != ALYS_UNWIND_DWARF)
		return;
	unwind_maps_add_all(t->um, &path, 1, unwind_table_failed, t);
}

struct path_list {
	const char **v;
	size_t n, cap;
};

static int list_mapped_exec_file(const struct maps_line *l, void *arg)
{
	struct path_list *pl = arg;

	if (!maps_line_is_exec_file(l))
		return 0;
	for (size_t i = 0; i < pl->n; i++)
		if (!strcmp(pl->v[i], l->file))
			return 0;
	pl->v = grow_array(pl->v, &pl->cap, pl->n + 1, sizeof(*pl->v));
	pl->v[pl->n++] = xmemdup_str(l->file, strlen(l->file));
	return 0;
}

/* Tables for everything the target has or will have mapped at start. */
static void build_unwind_tables(struct session *t)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

	if (t->o->unwind != ALYS_UNWIND_DWARF || t->o->empty_probes)
		return;
	if (t->o->argv) {
		const char **paths = xmalloc((t->tg.libs.n + 1) * sizeof(*paths));

		paths[0] = t->tg.exe;
		for (size_t i = 0; i < t->tg.libs.n; i++)
			paths[i + 1] = t->tg.libs.paths[i];
		unwind_maps_add_all(t->um, paths, t->tg.libs.n + 1, unwind_table_failed, t);
		free(paths);
	} else {
		struct path_list pl = { 0 };

		proc_maps_each(t->tg.pid, list_mapped_exec_file, &pl);
		unwind_maps_add_all(t->um, pl.v, pl.n, unwind_table_failed, t);
		for (size_t i = 0; i < pl.n; i++)
			free((char *)pl.v[i]);
		free(pl.v);
	}
	if (t->o->verbose) {
		size_t files, rows;

		unwind_maps_stats(t->um, &files, &rows);
		say(t, "unwind tables: %zu files, %zu rows, built in %.0f ms\n", files, rows,
		    (clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	}
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
	t->counters[CNT_MEMORY_SAMPLES] = t->mem.samples;
	t->counters[CNT_MEMORY_SAMPLE_NS] = t->mem.cost_ns;
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

	u64_table_init_addresses(&t->sink.blocks);
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
	mem_sampler_init(&t->mem, t->tg.pid, &t->tg.gp,
			 t->o->empty_probes ? 0 : t->o->memory_every_ns,
			 clock_ns(CLOCK_MONOTONIC), t->o->verbose);
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
	if (probe_attach_all(t))
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

/* links destroyed at once: each waits for RCU grace periods (~50-110 ms
 * here), ~1.1 s for a full trace's 13 one after the other */
static void reap_now(struct probe_link *links, int n)
{
	struct link_reaper r = { .n = 0 };

	link_reaper_start(&r, links, n);
	link_reaper_wait(&r);
}

/* The session's probes detached. */
static void drop_links(struct session *t)
{
	struct probe_link pl[LINK_REAPER_MAX];
	int n = 0;

	/* the pause probes may go before the allocation probes: from here
	 * each call reads GC_gc_no (bpf/live.h, gc_no_at), for good */
	if (t->bs.st)
		t->bs.st->gc_no_known = 2;
	for (int i = 0; i < t->nlinks + t->nsessions; i++) {
		pl[n++] = i < t->nlinks ? (struct probe_link){ t->links[i], -1 }
			: (struct probe_link){ NULL, t->session_fds[i - t->nlinks] };
		if (n == LINK_REAPER_MAX) {
			reap_now(pl, n);
			n = 0;
		}
	}
	reap_now(pl, n);
	t->nlinks = 0;
	t->nsessions = 0;
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
			links[n].fd = probe_attach_multi(t, prog, f, false, 0, false);
		else
			links[n].link = probe_attach_link(t, prog, f, false, 0, false);
		if (links[n].link || links[n].fd >= 0)
			n++;
	}
	t->bs.st->live_end_request = 1;
	until = clock_ns(CLOCK_MONOTONIC) + END_SCAN_WAIT_NS;
	while (!t->sink.end_scanned && clock_ns(CLOCK_MONOTONIC) < until)
		ring_buffer__poll(t->rb, 10);
	reap_now(links, n);
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

	/* a detach: where the memory was as the tracer left */
	if (!t->exited && !session_exited(t))
		mem_sampler_step(&t->mem, clock_ns(CLOCK_MONOTONIC), true, &t->sink.w);
	request_end_scan(t);
	drop_links(t);
	census_session_detach(&t->census);
	refill_windows_stop(&t->rw);
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
	bpf_setup_choose_sampling(t);
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
	/* A block read at entry lets the entry drop the return probe: that
	 * needs sessions too. ALYS_BPF_NO_PREDICT=1: every call's return
	 * probe reads its block (benchmarks compare the two). */
	t->predict_blocks = !t->refill && !t->census_only && !o->empty_probes &&
			    t->tg.gp.thread_key.mode != ALYS_TLS_NONE && t->tg.gp.aip_vaddr &&
			    !getenv("ALYS_BPF_NO_PREDICT");
	t->uprobe_sessions = (t->sample_bytes || t->predict_blocks) && !o->empty_probes &&
			     !getenv("ALYS_BPF_NO_SESSIONS");
	return bpf_setup_open(t);
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
	mem_sampler_step(&t->mem, now, false, &t->sink.w);
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
	drop_links(t);
	census_session_detach(&t->census);
	refill_windows_stop(&t->rw);
	mem_sampler_free(&t->mem);
	ring_buffer__free(t->rb);
	/* its probes are gone: the slot may serve another process */
	if (t->own_pool)
		bpf_slot_give_back_last(t->pool, &t->bs);
	else
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
