// SPDX-License-Identifier: MIT
#include "agent/agent.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/clock_ns.h"
#include "core/container_info.h"
#include "agent/crystal_detect.h"
#include "agent/exec_watch.h"
#include "modes/http_endpoint.h"
#include "core/live_profile.h"
#include "lib/util.h"
#include "core/signals.h"
#include "profile/outbuf.h"
#include "agent/push_api.h"
#include "agent/pusher.h"
#include "core/bpf_pool.h"
#include "lib/util.h"

/* Per process, unless --ringbuf-size: refill sampling sends little. */
#define AGENT_RINGBUF (8u << 20)
/* At exit: how long queued profiles may take to reach the server. */
#define PUSH_STOP_WAIT_S 5

struct proc {
	struct proc *next;
	struct tracer_opts o;	/* the agent's, for this pid */
	struct session *s;
	struct push_source *src;
	pid_t pid;
	bool probes_lost;	/* the refill probes could not be attached again */
	char service[256];
	char comm[32];
	/* set by the loader: */
	bool crystal;		/* a Crystal program */
	bool loaded;		/* its session is up */
	/* set while it loads: it exec'd again (comm is the new program's) */
	bool stale;
};

/*
 * Sessions load on a thread of their own: a process's unwind tables and
 * the verifier's check of its BPF programs take ~0.5-1 s, during which the
 * running sessions' ring buffers would not be read nor their duty windows
 * kept. The main thread queues the processes it sees (todo), the loader
 * hands each back (done) and says so on an eventfd.
 */
struct loader {
	pthread_t thread;
	bool started, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct proc *todo, *loading, *done;
	int efd;
};

struct agent {
	const struct tracer_opts *o;
	const struct agent_opts *ao;
	struct bpf_pool *pool;		/* unwind tables and BPF objects, shared */
	struct crystal_detect *cd;
	struct exec_watch *xw;
	struct pusher *pusher;
	struct http_endpoint *http;
	int ep, sigfd;
	struct loader ld;
	pthread_mutex_t lock;		/* procs, against /metrics */
	struct proc *procs;
	uint64_t started, ended, failed;	/* sessions */
	uint64_t lost_execs_seen;
};

#define say(a, ...) say_unless((a)->o->quiet, __VA_ARGS__)

/* The labels that tell a container's process apart, as pushed and on
 * /metrics (none for a process in no container); ns_pid holds a value. */
static size_t container_labels(const struct container_info *ci,
			       struct push_label out[PUSH_MAX_EXTRA_LABELS], char ns_pid[16])
{
	size_t n = 0;

	if (ci->id[0])
		out[n++] = (struct push_label){ "container_id", ci->id };
	if (ci->pod_uid[0])
		out[n++] = (struct push_label){ "pod_uid", ci->pod_uid };
	if (ci->cgroup[0])
		out[n++] = (struct push_label){ "cgroup", ci->cgroup };
	if (ci->ns_pid) {
		snprintf(ns_pid, 16, "%d", (int)ci->ns_pid);
		out[n++] = (struct push_label){ "ns_pid", ns_pid };
	}
	return n;
}

/* The kernel keeps 15 characters of a name (TASK_COMM_LEN - 1): a longer
 * listed name ("sleeper-gcclarge") matches the comm it is cut to. */
static bool comm_listed(const char *comm, const char *const *list, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		size_t len = strnlen(list[i], 15);

		if (strlen(comm) == len && !memcmp(comm, list[i], len))
			return true;
	}
	return false;
}

static bool comm_wanted(const struct agent *a, const char *comm)
{
	if (a->ao->n_only && !comm_listed(comm, a->ao->only_comm, a->ao->n_only))
		return false;
	return !comm_listed(comm, a->ao->exclude_comm, a->ao->n_exclude);
}

static void watch_fds(struct agent *a, struct proc *p, int op)
{
	int fds[] = { session_rb_fd(p->s), session_pidfd(p->s), session_live_wake_fd(p->s) };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = p };

		if (fds[i] >= 0)
			epoll_ctl(a->ep, op, fds[i], &ev);
	}
}

static void end_proc(struct agent *a, struct proc *p)
{
	struct proc **pp;

	watch_fds(a, p, EPOLL_CTL_DEL);
	session_finish(p->s);
	pthread_mutex_lock(&a->lock);
	for (pp = &a->procs; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	a->ended++;
	pthread_mutex_unlock(&a->lock);
	if (p->src)
		pusher_remove(a->pusher, p->src, session_take_live_profile(p->s));
	session_free(p->s);
	free(p);
}

static struct proc *in_list(struct proc *l, pid_t pid)
{
	for (; l; l = l->next)
		if (l->pid == pid)
			return l;
	return NULL;
}

static struct proc *find_proc(struct agent *a, pid_t pid)
{
	return in_list(a->procs, pid);
}

/* The process with pid while it is queued, loading or handed back; under
 * ld.mu. */
static struct proc *pending(struct agent *a, pid_t pid)
{
	struct proc *p = in_list(a->ld.todo, pid);

	if (!p && a->ld.loading && a->ld.loading->pid == pid)
		p = a->ld.loading;
	return p ? p : in_list(a->ld.done, pid);
}

/* A process to look at: at start, or as it execs. */
static void consider(struct agent *a, pid_t pid, const char *comm)
{
	struct proc *p, **tail;

	if (pid == getpid())
		return;
	p = find_proc(a, pid);
	if (p)			/* it exec'd: another program now */
		end_proc(a, p);
	pthread_mutex_lock(&a->ld.mu);
	p = pending(a, pid);
	if (p) {		/* exec'd while loading: looked at again once back */
		p->stale = true;
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
		pthread_mutex_unlock(&a->ld.mu);
		return;
	}
	pthread_mutex_unlock(&a->ld.mu);
	if (!comm_wanted(a, comm))
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->o = *a->o;
	p->o.pid = pid;
	if (!p->o.ringbuf_size)
		p->o.ringbuf_size = AGENT_RINGBUF;
	pthread_mutex_lock(&a->ld.mu);
	for (tail = &a->ld.todo; *tail; tail = &(*tail)->next)
		;
	*tail = p;
	pthread_cond_signal(&a->ld.cv);
	pthread_mutex_unlock(&a->ld.mu);
}

/* On the loader thread: whether p runs Crystal, and its session. comm:
 * p's when it was taken (the main thread may rewrite p->comm meanwhile). */
static void load(struct agent *a, struct proc *p, const char *comm)
{
	char exe[64], why[128];

	snprintf(exe, sizeof(exe), "/proc/%d/exe", p->pid);
	if (!crystal_detect(a->cd, exe, why, sizeof(why))) {
		if (a->o->verbose)
			say(a, "pid %d (%s): not traced: %s\n", p->pid, comm, why);
		return;
	}
	p->crystal = true;
	p->s = session_new(&p->o, a->pool, a->pusher || a->http);
	if (!p->s || session_from_pid(p->s, p->pid) || session_load(p->s) ||
	    session_start(p->s)) {
		say(a, "pid %d (%s): not traced (said above)\n", p->pid, comm);
		return;
	}
	p->loaded = true;
}

static void *loader_main(void *arg)
{
	struct agent *a = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&a->ld.mu);
	for (;;) {
		char comm[sizeof(((struct proc *)0)->comm)];
		struct proc *p;

		while (!a->ld.todo && !a->ld.stop)
			pthread_cond_wait(&a->ld.cv, &a->ld.mu);
		if (a->ld.stop)
			break;
		p = a->ld.loading = a->ld.todo;
		a->ld.todo = p->next;
		memcpy(comm, p->comm, sizeof(comm));
		pthread_mutex_unlock(&a->ld.mu);
		load(a, p, comm);
		pthread_mutex_lock(&a->ld.mu);
		a->ld.loading = NULL;
		p->next = a->ld.done;
		a->ld.done = p;
		/* fails only when the counter is full: a read is due anyway */
		(void)!write(a->ld.efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&a->ld.mu);
	return NULL;
}

static void drop_proc(struct proc *p)
{
	if (p->loaded)
		session_finish(p->s);
	session_free(p->s);
	free(p);
}

/* On the main thread: the sessions the loader has made, traced from now. */
static void take_loaded(struct agent *a)
{
	struct proc *done, *p;
	uint64_t n;

	if (read(a->ld.efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&a->ld.mu);
	done = a->ld.done;
	a->ld.done = NULL;
	pthread_mutex_unlock(&a->ld.mu);
	while ((p = done)) {
		done = p->next;
		p->next = NULL;
		if (p->stale || !p->loaded) {
			pid_t pid = p->pid;
			bool stale = p->stale, failed = p->crystal && !p->loaded;
			char comm[sizeof(p->comm)];

			memcpy(comm, p->comm, sizeof(comm));
			drop_proc(p);
			if (failed) {
				pthread_mutex_lock(&a->lock);
				a->failed++;
				pthread_mutex_unlock(&a->lock);
			}
			if (stale)
				consider(a, pid, comm);
			continue;
		}
		snprintf(p->service, sizeof(p->service), "%s",
			 a->ao->service ? a->ao->service : base_name(session_exe(p->s)));
		if (a->pusher) {
			struct push_label extra[PUSH_MAX_EXTRA_LABELS];
			char ns_pid[16];
			size_t nx = container_labels(session_container(p->s), extra, ns_pid);

			p->src = pusher_add(a->pusher, session_live_profile(p->s), p->pid,
					    p->service, extra, nx);
		}
		watch_fds(a, p, EPOLL_CTL_ADD);
		pthread_mutex_lock(&a->lock);
		p->next = a->procs;
		a->procs = p;
		a->started++;
		pthread_mutex_unlock(&a->lock);
	}
}

static int loader_start(struct agent *a)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &a->ld };

	a->ld.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->ld.efd < 0 || epoll_ctl(a->ep, EPOLL_CTL_ADD, a->ld.efd, &ev) ||
	    pthread_create(&a->ld.thread, NULL, loader_main, a))
		return -1;
	a->ld.started = true;
	return 0;
}

/* A load under way finishes first (a second at most); the rest are
 * dropped. */
static void loader_stop(struct agent *a)
{
	struct proc *lists[2];

	if (a->ld.started) {
		pthread_mutex_lock(&a->ld.mu);
		a->ld.stop = true;
		pthread_cond_signal(&a->ld.cv);
		pthread_mutex_unlock(&a->ld.mu);
		pthread_join(a->ld.thread, NULL);
	}
	lists[0] = a->ld.todo;
	lists[1] = a->ld.done;
	a->ld.todo = a->ld.done = NULL;
	for (int i = 0; i < 2; i++)
		while (lists[i]) {
			struct proc *p = lists[i];

			lists[i] = p->next;
			drop_proc(p);
		}
	if (a->ld.efd >= 0)
		close(a->ld.efd);
}

static void on_exec(void *ctx, pid_t pid, const char *comm)
{
	consider(ctx, pid, comm);
}

static void read_comm(pid_t pid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	out[0] = 0;
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

/* Every process running now (and, after lost exec events, again). */
static void scan_processes(struct agent *a)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct proc *queued;
		char comm[32];
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (find_proc(a, pid))
			continue;
		pthread_mutex_lock(&a->ld.mu);
		queued = pending(a, pid);
		pthread_mutex_unlock(&a->ld.mu);
		if (queued)
			continue;
		read_comm(pid, comm, sizeof(comm));
		consider(a, pid, comm);
	}
	closedir(d);
}

static void prom_value(struct outbuf *o, const char *v)
{
	outbuf_char(o, '"');
	for (const char *c = v; *c; c++) {
		if (*c == '"' || *c == '\\')
			outbuf_char(o, '\\');
		if (*c == '\n')
			outbuf_str(o, "\\n");
		else
			outbuf_char(o, *c);
	}
	outbuf_char(o, '"');
}

/* pid="1",service_name="x" and its container's: Prometheus escapes in the
 * values. */
static char *proc_labels(const struct proc *p)
{
	struct push_label extra[PUSH_MAX_EXTRA_LABELS];
	char ns_pid[16];
	size_t n = container_labels(session_container(p->s), extra, ns_pid);
	struct outbuf o;

	outbuf_init(&o, -1);
	outbuf_printf(&o, "pid=\"%d\",service_name=", p->pid);
	prom_value(&o, p->service);
	for (size_t i = 0; i < n; i++) {
		outbuf_printf(&o, ",%s=", extra[i].name);
		prom_value(&o, extra[i].value);
	}
	outbuf_char(&o, 0);
	return o.buf;
}

/* /metrics: the agent's sessions and pushes (on the HTTP thread). */
static void agent_metrics(void *ctx, struct outbuf *o)
{
	struct agent *a = ctx;
	struct push_stats ps = { 0 };
	struct live_profile **lps;
	char **labels;
	size_t n = 0;

	pthread_mutex_lock(&a->lock);
	http_metric(o, "alys_agent_processes", "gauge", "Processes traced now.",
		    a->started - a->ended);
	http_metric(o, "alys_agent_sessions_started_total", "counter",
		    "Processes traced since the agent started.", a->started);
	http_metric(o, "alys_agent_sessions_failed_total", "counter",
		    "Crystal processes that could not be traced (said on stderr).", a->failed);
	lps = xcalloc(a->started - a->ended + 1, sizeof(*lps));
	labels = xcalloc(a->started - a->ended + 1, sizeof(*labels));
	for (struct proc *p = a->procs; p; p = p->next) {
		if (!session_live_profile(p->s))
			continue;
		lps[n] = session_live_profile(p->s);
		labels[n++] = proc_labels(p);
	}
	/* Not waiting for the sessions' thread, which may be waiting for
	 * a->lock: as of their last flush (200 ms at most). */
	http_profile_metrics(o, n, lps, (const char *const *)labels, false);
	pthread_mutex_unlock(&a->lock);
	while (n)
		free(labels[--n]);
	free(labels);
	free(lps);
	if (!a->pusher)
		return;
	pusher_stats(a->pusher, &ps);
	http_metric(o, "alys_push_profiles_total", "counter", "Window profiles made to push.",
		    ps.windows);
	http_metric(o, "alys_push_sent_total", "counter", "Profiles the server accepted.",
		    ps.sent);
	http_metric(o, "alys_push_failed_attempts_total", "counter",
		    "Requests that failed (retried unless refused).", ps.attempts_failed);
	http_metric(o, "alys_push_rejected_total", "counter",
		    "Profiles the server refused with a 4xx status (not retried).", ps.rejected);
	http_metric(o, "alys_push_dropped_total", "counter",
		    "Profiles dropped: the queue was full, or they were left at exit.", ps.dropped);
	http_metric(o, "alys_push_expired_total", "counter",
		    "Profiles dropped unsent, older than the servers take.", ps.expired);
	http_metric(o, "alys_push_windows_cut_total", "counter",
		    "Windows whose smallest stacks went as one \"[other stacks]\" sample.",
		    ps.windows_cut);
	http_metric(o, "alys_push_queued", "gauge", "Profiles waiting to be sent.", ps.queued);
	http_metric(o, "alys_push_queued_bytes", "gauge", "Bytes of requests waiting.",
		    ps.queued_bytes);
	http_metric(o, "alys_push_sent_bytes_total", "counter", "Request bytes sent.",
		    ps.bytes_sent);
}

static void loop(struct agent *a)
{
	for (;;) {
		struct epoll_event got[16];
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		int timeout = 200, n;
		bool stop = false;

		for (struct proc *p = a->procs; p; p = p->next) {
			int t = session_timeout(p->s, now);

			p->probes_lost |= t < 0;	/* said */
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		n = epoll_wait(a->ep, got, 16, timeout);
		for (int i = 0; i < n; i++)
			if (got[i].data.ptr == &a->sigfd) {
				struct signalfd_siginfo si;

				while (read(a->sigfd, &si, sizeof(si)) == sizeof(si))
					stop = true;
			}
		exec_watch_drain(a->xw);
		take_loaded(a);
		if (exec_watch_lost(a->xw) != a->lost_execs_seen) {
			a->lost_execs_seen = exec_watch_lost(a->xw);
			scan_processes(a);
		}
		now = clock_ns(CLOCK_MONOTONIC);
		for (struct proc *p = a->procs, *next; p; p = next) {
			next = p->next;
			if (p->probes_lost || session_step(p->s, now, false) || session_exited(p->s))
				end_proc(a, p);
		}
		if (stop)
			break;
	}
}

static int start(struct agent *a)
{
	char err[PATH_MAX + 256];
	struct epoll_event ev = { .events = EPOLLIN };

	if ((a->sigfd = signals_open(false)) < 0)
		return -1;
	a->ep = epoll_create1(EPOLL_CLOEXEC);
	a->cd = crystal_detect_new();
	if (a->ep < 0 || !a->cd) {
		fail("out of resources: %s\n", strerror(errno));
		return -1;
	}
	if (a->ao->push) {
		a->pusher = pusher_start(&a->ao->push_opts, err, sizeof(err));
		if (!a->pusher) {
			fail("%s\n", err);
			return -1;
		}
	}
	if (a->o->http_addr) {
		a->http = http_endpoint_start(a->o->http_addr, NULL, agent_metrics, a, err,
					      sizeof(err));
		if (!a->http) {
			fail("%s\n", err);
			return -1;
		}
		say(a, "serving the agent's metrics at http://%s/metrics\n",
		    http_url_host(a->o->http_addr, http_endpoint_port(a->http), err, sizeof(err)));
	}
	a->xw = exec_watch_open(on_exec, a, err, sizeof(err));
	if (!a->xw) {
		fail("%s\n", err);
		return -1;
	}
	if (loader_start(a)) {
		fail("cannot start the session loader: %s\n", strerror(errno));
		return -1;
	}
	ev.data.ptr = &a->sigfd;
	epoll_ctl(a->ep, EPOLL_CTL_ADD, a->sigfd, &ev);
	ev.data.ptr = a->xw;
	epoll_ctl(a->ep, EPOLL_CTL_ADD, exec_watch_fd(a->xw), &ev);
	return 0;
}

int agent_run(const struct tracer_opts *o)
{
	struct agent a = { .o = o, .ao = o->agent, .ep = -1, .sigfd = -1, .ld.efd = -1 };
	int ret = 1;

	if (session_check_privileges())
		return 1;
	a.pool = bpf_pool_new();
	if (!a.pool) {
		fail("out of memory\n");
		return 1;
	}
	pthread_mutex_init(&a.lock, NULL);
	pthread_mutex_init(&a.ld.mu, NULL);
	pthread_cond_init(&a.ld.cv, NULL);
	if (!start(&a)) {
		say(&a, "tracing every Crystal process%s; Ctrl-C or SIGTERM to stop\n",
		    a.ao->n_only || a.ao->n_exclude ? " the --only-comm/--exclude-comm filters let "
						     "through" : "");
		scan_processes(&a);
		loop(&a);
		ret = 0;
	}
	loader_stop(&a);
	while (a.procs)
		end_proc(&a, a.procs);
	pusher_stop(a.pusher, PUSH_STOP_WAIT_S);
	http_endpoint_stop(a.http);
	exec_watch_close(a.xw);
	crystal_detect_free(a.cd);
	bpf_pool_free(a.pool);
	if (a.ep >= 0)
		close(a.ep);
	if (a.sigfd >= 0)
		close(a.sigfd);
	pthread_mutex_destroy(&a.lock);
	pthread_mutex_destroy(&a.ld.mu);
	pthread_cond_destroy(&a.ld.cv);
	return ret;
}
