// SPDX-License-Identifier: MIT
/* --heap-snapshot: see heap_snapshot.h. */
#include "modes/heap_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock_ns.h"
#include "lib/elf_file.h"
#include "gc/fiber_layout.h"
#include "gc/fiber_list.h"
#include "gc/gc_count.h"
#include "gc/gc_probes.h"
#include "gc/heap_walk.h"
#include "core/launch.h"
#include "lib/util.h"
#include "core/proc_maps.h"
#include "core/session.h"
#include "core/target.h"
#include "core/trace_writer.h"
#include "lib/util.h"

#define RED_ZONE 128		/* below the stack pointer, still the thread's */
#define MAX_THREADS 4096
#define MAX_FIBER_STACK (64u << 20)	/* a larger range is no fiber's stack */

struct thread {
	pid_t tid;
	struct user_regs_struct regs;
	bool regs_ok;
};

struct snapshot {
	pid_t pid;
	const struct gc_probes *gp;
	uint64_t bias;			/* load bias of the file holding libgc */
	struct trace_writer *w;
	struct heap_snapshot_stats st;
	struct thread *threads;
	size_t nr_threads;
	uint8_t *buf;			/* one block or root region at a time */
	size_t cap_buf;
	/* the rw mappings, read before the copy */
	struct region { uint64_t start, end; char name[PATH_MAX]; bool file, gc; } *rw;
	size_t nr_rw, cap_rw;
	/* the collector's own state: not a root (its free lists would keep
	 * free objects reachable) */
	uint64_t gc_state_start, gc_state_end;
	struct stat gc_file;		/* libgc as a library; st_ino 0: linked in */
	/* suspended fibers: their stacks, found in the Fiber objects */
	struct fiber_layout fl;
	uint64_t fiber_list;		/* Fiber::fibers in the target; 0: unknown */
	struct fiber_entry *fibers;
	size_t nr_fibers;
};


static uint8_t *room(struct snapshot *s, size_t n)
{
	if (n > s->cap_buf) {
		free(s->buf);
		s->buf = malloc(n);
		s->cap_buf = s->buf ? n : 0;
	}
	return s->buf;
}

static bool seized(const struct snapshot *s, pid_t tid)
{
	for (size_t i = 0; i < s->nr_threads; i++)
		if (s->threads[i].tid == tid)
			return true;
	return false;
}

/*
 * Stop every thread with ptrace (PTRACE_SEIZE, then PTRACE_INTERRUPT): the
 * process stays stopped while its memory is copied, and each thread's
 * registers can be read. Threads started meanwhile are caught by listing
 * the tasks again until a pass finds none new.
 */
static int stop_threads(struct snapshot *s, char *err, size_t errlen)
{
	char path[64];
	bool found;

	snprintf(path, sizeof(path), "/proc/%d/task", s->pid);
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d) {
			snprintf(err, errlen, "pid %d is gone (%s)", s->pid, strerror(errno));
			return -1;
		}
		found = false;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			int status;

			if (tid <= 0 || seized(s, tid) || s->nr_threads == MAX_THREADS)
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
				if (errno == ESRCH)
					continue;	/* exited meanwhile */
				snprintf(err, errlen, "cannot stop thread %d of pid %d with ptrace: %s%s",
					 tid, s->pid, strerror(errno), errno == EPERM ?
					 " (another tracer, a debugger, holds it? or "
					 "kernel.yama.ptrace_scope is 3)" : "");
				closedir(d);
				return -1;
			}
			s->threads[s->nr_threads++] = (struct thread){ .tid = tid };
			if (waitpid(tid, &status, __WALL) < 0 || !WIFSTOPPED(status))
				continue;	/* gone: its registers stay unread */
			found = true;
		}
		closedir(d);
	} while (found);
	return 0;
}

static void resume_threads(struct snapshot *s)
{
	for (size_t i = 0; i < s->nr_threads; i++)
		ptrace(PTRACE_DETACH, s->threads[i].tid, 0, 0);
}

static int collect_rw(const struct maps_line *l, void *arg)
{
	struct snapshot *s = arg;
	struct region *r;

	if (l->perms[0] != 'r' || l->perms[1] != 'w')
		return 0;
	if (s->nr_rw == s->cap_rw) {
		size_t cap = s->cap_rw ? 2 * s->cap_rw : 64;
		struct region *v = realloc(s->rw, cap * sizeof(*v));

		if (!v)
			return -1;
		s->rw = v;
		s->cap_rw = cap;
	}
	r = &s->rw[s->nr_rw++];
	r->start = l->start;
	r->end = l->end;
	r->file = l->path[0] == '/';
	r->gc = false;
	snprintf(r->name, sizeof(r->name), "%s", l->path);
	/* libgc's own mappings, known by inode: the process may name the
	 * file by another path than ours (a symlink, a mount namespace) */
	if (r->file && s->gc_file.st_ino) {
		struct stat st;

		r->gc = !stat(l->file, &st) && st.st_ino == s->gc_file.st_ino &&
			st.st_dev == s->gc_file.st_dev;
	}
	return 0;
}

/* Copies [start, end) of the target as one root, leaving out the
 * collector's own state where it lies inside. */
static void copy_root(struct snapshot *s, unsigned kind, const char *name, uint64_t start,
		      uint64_t end)
{
	if (s->gc_state_end > start && s->gc_state_start < end) {
		if (s->gc_state_start > start)
			copy_root(s, kind, name, start, s->gc_state_start);
		if (s->gc_state_end < end)
			copy_root(s, kind, name, s->gc_state_end, end);
		return;
	}
	if (end <= start || !room(s, end - start) ||
	    heap_peek(s->pid, start, s->buf, end - start)) {
		s->st.unreadable++;
		return;
	}
	trace_writer_root(s->w, kind, name, start, s->buf, end - start);
	s->st.roots++;
	s->st.root_bytes += end - start;
}

/* The index of the rw mapping holding addr, or nr_rw. */
static size_t region_at(const struct snapshot *s, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->nr_rw; i++)
		if (addr >= s->rw[i].start && addr < s->rw[i].end)
			break;
	return i;
}

/* The file mapping rw[i] belongs to: itself (a writable mapping of the
 * file: its .data), or the one right before an anonymous rw[i] (its .bss);
 * NULL for other memory. */
static const struct region *file_of(const struct snapshot *s, size_t i)
{
	const struct region *r = &s->rw[i];
	const struct region *prev = i ? &s->rw[i - 1] : NULL;

	if (r->file)
		return r;
	return !r->name[0] && prev && prev->file && prev->end == r->start ? prev : NULL;
}

/* The file whose .data or .bss rw[i] is, if it is copied as a root: not
 * libgc's, whose data is the collector's own state. */
static const char *data_of(const struct snapshot *s, size_t i, bool *bss)
{
	const struct region *f = file_of(s, i);

	*bss = f && f != &s->rw[i];
	return f && !f->gc ? f->name : NULL;
}

static void copy_data_roots(struct snapshot *s)
{
	char name[PATH_MAX + 16];

	for (size_t i = 0; i < s->nr_rw; i++) {
		bool bss;
		const char *file = data_of(s, i, &bss);

		if (!file)
			continue;
		snprintf(name, sizeof(name), "%s %s", bss ? "bss" : "data", base_name(file));
		copy_root(s, ALYS_ROOT_DATA, name, s->rw[i].start, s->rw[i].end);
	}
}

/* Whether [start, end) starts in libgc's own data or bss: the collector's
 * state, which it registers as a root but scans without the ranges it
 * excludes (its free lists). */
static bool gc_state(const struct snapshot *s, uint64_t start)
{
	size_t i = region_at(s, start);
	const struct region *f = i < s->nr_rw ? file_of(s, i) : NULL;

	return f && f->gc;
}

/* Whether [start, end) lies within the data and bss copied as roots. */
static bool copied_data(const struct snapshot *s, uint64_t start, uint64_t end)
{
	bool bss;

	/* a range may go on into the next mapping (.data, then .bss) */
	for (size_t i = region_at(s, start); i < s->nr_rw && data_of(s, i, &bss);
	     i = region_at(s, start)) {
		if (end <= s->rw[i].end)
			return true;
		start = s->rw[i].end;
	}
	return false;
}

/* The roots registered with the collector (GC_add_roots) that are not the
 * data and bss already copied: GC_arrays._static_roots[0 .. n_root_sets). */
static void copy_registered_roots(struct snapshot *s)
{
	uint64_t arrays = s->bias + s->gp->layout.arrays_vaddr;
	struct { uint64_t start, end, next, tmp; } roots[256];
	uint32_t n = 0;
	char name[64];

	if (!s->gp->roots_ok || heap_peek(s->pid, arrays + s->gp->roots_n_off, &n, sizeof(n)))
		return;
	for (uint32_t i = 0; i < n && i < s->gp->roots_max; i += 256) {
		uint32_t k = n - i < 256 ? n - i : 256;

		if (heap_peek(s->pid, arrays + s->gp->roots_off + (uint64_t)i * 32, roots, k * 32)) {
			s->st.unreadable++;
			return;
		}
		for (uint32_t j = 0; j < k; j++) {
			if (roots[j].start >= roots[j].end || roots[j].end - roots[j].start > (1ull << 30) ||
			    copied_data(s, roots[j].start, roots[j].end) || gc_state(s, roots[j].start))
				continue;
			snprintf(name, sizeof(name), "registered 0x%llx",
				 (unsigned long long)roots[j].start);
			copy_root(s, ALYS_ROOT_REGISTERED, name, roots[j].start, roots[j].end);
		}
	}
}

/* Each thread's registers, and its stack from the stack pointer (less the
 * red zone) to the end of the mapping holding it. */
static void copy_threads(struct snapshot *s)
{
	char name[64];

	for (size_t i = 0; i < s->nr_threads; i++) {
		struct thread *t = &s->threads[i];
		uint64_t sp;
		size_t k;

		if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs))
			continue;
		s->st.threads++;
		snprintf(name, sizeof(name), "thread %d%s", t->tid,
			 t->tid == s->pid ? " (main)" : "");
		trace_writer_root(s->w, ALYS_ROOT_REGISTERS, name, 0, &t->regs, sizeof(t->regs));
		s->st.roots++;
		sp = t->regs.rsp;
		k = region_at(s, sp);
		if (k < s->nr_rw) {
			uint64_t from = sp - RED_ZONE >= s->rw[k].start ? sp - RED_ZONE : sp;

			copy_root(s, ALYS_ROOT_STACK, name, from & ~7ull, s->rw[k].end);
		}
	}
}

/* The anonymous read-write mapping (a fiber stack pool's) holding
 * [from, to), or NULL. */
static const struct region *anon_rw(const struct snapshot *s, uint64_t from, uint64_t to)
{
	size_t i = region_at(s, from);

	if (i == s->nr_rw || to > s->rw[i].end || s->rw[i].file || s->rw[i].name[0])
		return NULL;
	return &s->rw[i];
}

/* The fibers in the runtime's list (fiber_list.h); the stacks of those
 * suspended, in anonymous memory (a stack pool's). A running fiber's stack
 * is its thread's, copied with the thread; so is the main fiber's. */
static void copy_fibers(struct snapshot *s)
{
	char name[64], why[256];

	if (!s->fiber_list)
		return;
	if (fiber_list_read(s->pid, s->fiber_list, &s->fl, &s->fibers, &s->nr_fibers, why,
			    sizeof(why))) {
		fail("heap snapshot: suspended fibers' stacks are not "
			"copied (%s): what only they hold shows as unreachable\n", why);
		return;
	}
	s->st.fibers_listed = (uint32_t)s->nr_fibers;
	for (size_t i = 0; i < s->nr_fibers; i++) {
		const struct fiber_entry *f = &s->fibers[i];

		if (!f->suspended || !f->top || f->top >= f->bottom ||
		    f->bottom - f->top > MAX_FIBER_STACK || (f->top & 7) ||
		    !anon_rw(s, f->top, f->bottom))
			continue;
		snprintf(name, sizeof(name), "fiber 0x%llx", (unsigned long long)f->fiber);
		copy_root(s, ALYS_ROOT_FIBER, name, f->top, f->bottom);
		s->st.fibers++;
	}
}

/* One heap block: all of it, but a large pointer-free object only for its
 * first word (its type id, if any: it holds no pointers). */
static int copy_block(void *arg, uint64_t block, const uint8_t *hdr)
{
	struct snapshot *s = arg;
	const struct gc_layout *l = &s->gp->layout;
	uint64_t hblk = 1ull << l->log_hblk, sz, len;
	unsigned kind = hdr[l->hb_flags_off - 1];	/* hb_obj_kind precedes hb_flags */

	memcpy(&sz, hdr + l->hb_sz_off, sizeof(sz));
	if (sz <= hblk / 2)
		len = hblk;
	else if (kind == ALYS_BLOCK_ATOMIC)
		len = 8;
	else
		len = (sz + hblk - 1) & ~(hblk - 1);
	if (!room(s, len))
		return -1;
	if (heap_peek(s->pid, block, s->buf, len)) {
		s->st.unreadable++;
		return 0;
	}
	trace_writer_heap_block(s->w, block, sz, kind, s->buf, len);
	s->st.blocks++;
	s->st.heap_bytes += sz > hblk / 2 ? sz : hblk;
	return 0;
}

static int take(struct snapshot *s, char *err, size_t errlen)
{
	const struct gc_layout *l = &s->gp->layout;
	struct heap_walk_stats hw = { 0 };
	uint64_t t0;
	int ret;

	s->threads = calloc(MAX_THREADS, sizeof(*s->threads));
	if (!s->threads) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	s->st.ts_ns = t0;
	ret = stop_threads(s, err, errlen);
	if (!ret && proc_maps_each(s->pid, collect_rw, s) < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s", s->pid, strerror(errno));
		ret = -1;
	}
	if (!ret) {
		copy_data_roots(s);
		copy_registered_roots(s);
		copy_threads(s);
		ret = heap_walk(s->pid, l, s->bias, copy_block, NULL, s, &hw, err, errlen);
		s->st.unreadable += hw.unreadable;
		copy_fibers(s);
	}
	resume_threads(s);
	s->st.stop_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	return ret;
}

int heap_snapshot_take(pid_t pid, const struct gc_probes *gp, struct trace_writer *w,
		       struct heap_snapshot_stats *st, char *err, size_t errlen)
{
	struct snapshot s = { .pid = pid, .gp = gp, .w = w };
	struct gc_count gc;
	uint64_t aip = 1;
	int ret;

	if (!gp->layout_ok) {
		snprintf(err, errlen, "cannot find the collector's heap in %s (%s)", gp->name,
			 gp->layout_why);
		return -1;
	}
	gc_count_init(&gc, pid, gp);
	if (!gc_count_bias(&gc, &s.bias)) {
		snprintf(err, errlen, "cannot find where %s is mapped in pid %d", gp->name, pid);
		return -1;
	}
	if (gp->aip_vaddr && gc_count_read_word(&gc, gp->aip_vaddr, &aip))
		aip = (uint32_t)aip != 0;
	s.st.all_interior_pointers = (uint8_t)aip;
	s.st.block_size = 1ull << gp->layout.log_hblk;
	if (gp->in_executable) {
		s.gc_state_start = s.bias + gp->layout.arrays_vaddr;
		s.gc_state_end = s.gc_state_start + gp->layout.arrays_size;
	} else if (stat(gp->path, &s.gc_file)) {
		snprintf(err, errlen, "cannot read %s: %s", gp->name, strerror(errno));
		return -1;
	}
	{
		char why[PATH_MAX + 128];

		fiber_list_find(pid, &s.fl, &s.fiber_list, why, sizeof(why));
		if (s.fl.ok && !s.fiber_list)
			s.fl.ok = false;
		if (!s.fl.ok)
			fail("heap snapshot: suspended fibers' stacks are not "
				"copied (%s): what only they hold shows as unreachable\n", why);
	}
	if (!gp->roots_ok)
		fail("heap snapshot: the roots registered with GC_add_roots "
			"are not copied (%s): what only they hold shows as unreachable\n",
			gp->roots_why);
	ret = take(&s, err, errlen);
	if (!ret)
		trace_writer_snapshot(w, &(const struct snapshot_record){
			s.st.ts_ns, s.st.stop_ns, s.st.blocks, s.st.heap_bytes, s.st.roots,
			s.st.all_interior_pointers, s.st.block_size });
	*st = s.st;
	free(s.fibers);
	free(s.threads);
	free(s.rw);
	free(s.buf);
	return ret;
}

int heap_snapshot_run(const struct tracer_opts *o)
{
	struct heap_snapshot_stats st = { 0 };
	struct trace_writer_header h = { 0 };
	struct trace_writer w = { 0 };
	struct target tg = { 0 };
	struct proc_maps maps;
	struct invoker inv;
	char output[PATH_MAX], err[PATH_MAX + 512];
	int ret = 1;

	if (!o->pid) {
		fail("--heap-snapshot takes a running process: give --pid PID\n");
		return 2;
	}
	if (target_from_pid(&tg, o->pid, err, sizeof(err))) {
		fail("%s\n", err);
		target_free(&tg);
		return 1;
	}
	if (!tg.gp.layout_ok) {
		fail("--heap-snapshot: cannot find the collector's heap in %s (%s)\n", tg.gp.name,
		     tg.gp.layout_why);
		target_free(&tg);
		return 1;
	}
	invoker_from_env(&inv, o->as_root);
	if (o->output)
		snprintf(output, sizeof(output), "%s", o->output);
	else
		snprintf(output, sizeof(output), "heap-%d.alys", o->pid);
	if (trace_writer_open(&w, output, inv.drop ? inv.uid : (uid_t)-1,
			      inv.drop ? inv.gid : (gid_t)-1, err, sizeof(err))) {
		fail("%s\n", err);
		target_free(&tg);
		return 1;
	}
	h.pid = (uint32_t)o->pid;
	h.exe = tg.exe;
	h.start_ns = clock_ns(CLOCK_MONOTONIC);
	h.start_unix_ns = clock_ns(CLOCK_REALTIME);
	h.unwind = "none";
	h.sample = "heap-snapshot";
	h.liveness = "off";
	trace_writer_header(&w, &h);
	proc_maps_init(&maps, o->pid);
	if (inv.drop)
		file_keep_owner(inv.uid, inv.gid);
	proc_maps_keep_files(&maps, o->debug_dir, output, o->quiet);
	proc_maps_refresh(&maps, &w);
	if (heap_snapshot_take(o->pid, &tg.gp, &w, &st, err, sizeof(err))) {
		fail("--heap-snapshot: %s\n", err);
		trace_writer_end(&w, "error", 0, clock_ns(CLOCK_MONOTONIC), "off");
	} else {
		trace_writer_end(&w, "snapshot", 0, clock_ns(CLOCK_MONOTONIC), "off");
		ret = 0;
	}
	if (trace_writer_close(&w)) {
		fail("cannot write %s: %s\n", output, strerror(w.error));
		ret = 1;
	} else if (!ret && !o->quiet) {
		heap_snapshot_say(o->pid, &st, output);
	}
	proc_maps_free(&maps);
	target_free(&tg);
	return ret;
}

void heap_snapshot_say(pid_t pid, const struct heap_snapshot_stats *st, const char *where)
{
	fail("heap snapshot of pid %d: %llu blocks (%.1f MiB), %llu "
		"roots (%.1f MiB) from %u threads and %u fibers (%u suspended: their stacks); "
		"stopped %.1f ms; written to %s\n",
		pid, (unsigned long long)st->blocks, st->heap_bytes / 1048576.0,
		(unsigned long long)st->roots, st->root_bytes / 1048576.0, st->threads,
		st->fibers_listed, st->fibers, st->stop_ns / 1e6, where);
}
