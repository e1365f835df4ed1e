// SPDX-License-Identifier: MIT
#include "modes/trace_one.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "base/clock_ns.h"
#include "modes/heap_snapshot.h"
#include "modes/http_endpoint.h"
#include "core/launch.h"
#include "core/live_profile.h"
#include "lib/util.h"
#include "core/signals.h"

#define INTERVAL_TOP 10		/* sites per --interval report */

struct trace_one {
	const struct tracer_opts *o;
	struct session *s;
	struct http_endpoint *http;
	int sigfd;
	int signals;
	int interrupted;	/* signal that stopped a launch before exec */
	bool want_snapshot;	/* SIGUSR1: copy the heap into the trace */
};

#define say(t, ...) say_unless((t)->o->quiet, __VA_ARGS__)

/*
 * Launched: the first signal is passed on to the command (a Ctrl-C from the
 * terminal already reached it) and tracing goes on until it exits; a second
 * one detaches. Attached: any signal detaches.
 */
static bool handle_signal(struct trace_one *t)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(t->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			t->want_snapshot = true;
			continue;
		}
		t->signals++;
		if (!session_launched(t->s) || t->signals > 1) {
			stop = true;
			continue;
		}
		if (si.ssi_code != SI_KERNEL)
			kill(session_pid(t->s), (int)si.ssi_signo);
		say(t, "passed %s on to pid %d; tracing until it exits (again to detach)\n",
		    strsignal((int)si.ssi_signo), session_pid(t->s));
	}
	return stop;
}

/* SIGUSR1: the events so far, then a heap snapshot (heap_snapshot.h). */
static void snapshot_now(struct trace_one *t)
{
	struct heap_snapshot_stats st;
	char err[PATH_MAX + 256];

	t->want_snapshot = false;
	if (heap_snapshot_take(session_pid(t->s), session_gc(t->s), session_writer(t->s), &st,
			       err, sizeof(err)))
		fail("heap snapshot: %s\n", err);
	else if (!t->o->quiet)
		heap_snapshot_say(session_pid(t->s), &st, session_output(t->s));
}

static void print_sites(struct trace_one *t, uint64_t now)
{
	live_profile_print_sites(session_live_profile(t->s), stderr, INTERVAL_TOP,
				 (now - session_start_ns(t->s)) / 1e9);
}

static void trace_loop(struct trace_one *t)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int fds[] = { session_rb_fd(t->s), session_pidfd(t->s), t->sigfd,
		      session_live_wake_fd(t->s) };
	uint64_t last_report = clock_ns(CLOCK_MONOTONIC);

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };

		if (fds[i] >= 0)
			epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	for (;;) {
		struct epoll_event got[4];
		bool stop = false, report;
		int timeout = session_timeout(t->s, clock_ns(CLOCK_MONOTONIC));
		uint64_t now;
		int n;

		if (timeout < 0)
			break;
		n = epoll_wait(ep, got, 4, timeout);
		for (int i = 0; i < n; i++) {
			if (got[i].data.fd == t->sigfd && handle_signal(t))
				stop = true;
			if (got[i].data.fd == session_pidfd(t->s))
				stop = true;
		}
		if (t->want_snapshot && !stop) {
			session_step(t->s, clock_ns(CLOCK_MONOTONIC), false);
			snapshot_now(t);
		}
		now = clock_ns(CLOCK_MONOTONIC);
		report = t->o->interval_ns && now - last_report >= t->o->interval_ns;
		if (session_step(t->s, now, report))
			break;
		if (report) {
			print_sites(t, now);
			last_report = now;
		}
		if (stop)
			break;
	}
	close(ep);
	session_exited(t->s);
}

/* A signal that arrived while the command was being set up (Ctrl-C during
 * the launch): the child never ran the command, so it has nobody to pass
 * the signal on to; the launch is called off instead. */
static int launch_interrupted(struct trace_one *t)
{
	struct signalfd_siginfo si;

	while (!t->interrupted && read(t->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			t->want_snapshot = true;	/* taken once it runs */
		else
			t->interrupted = (int)si.ssi_signo;
	}
	return t->interrupted;
}

/* Lets the launched command exec: 0, or the exit status. */
static int release(struct trace_one *t)
{
	struct launch *l = session_launched(t->s);
	char err[PATH_MAX + 256];

	if (!launch_interrupted(t) && !launch_release(l, err, sizeof(err)))
		return 0;
	/* The child also dies of a Ctrl-C from the terminal before exec:
	 * the release then fails, and the signal says why. */
	if (launch_interrupted(t)) {
		launch_abort(l);
		fail("interrupted (%s) before %s started: nothing traced\n",
		     strsignal(t->interrupted), t->o->argv[0]);
		return 128 + t->interrupted;
	}
	fail("%s: %s\n", t->o->argv[0], err);
	session_exited(t->s);
	return 126;
}

static int start_http(struct trace_one *t)
{
	char err[PATH_MAX + 256];

	t->http = http_endpoint_start(t->o->http_addr, session_live_profile(t->s), NULL, NULL,
				      err, sizeof(err));
	if (!t->http) {
		fail("%s\n", err);
		return -1;
	}
	say(t, "serving the live profile at http://%s/debug/pprof/\n",
	    http_url_host(t->o->http_addr, http_endpoint_port(t->http), err, sizeof(err)));
	return 0;
}

static int run(struct trace_one *t)
{
	const struct tracer_opts *o = t->o;
	int ret = o->argv ? session_from_command(t->s) : session_from_pid(t->s, o->pid);

	if (ret)
		return ret;
	if ((t->sigfd = signals_open(true)) < 0 || session_load(t->s))
		return 1;
	if (o->argv && session_launch(t->s))
		return 1;
	if (session_start(t->s) || (o->http_addr && start_http(t))) {
		if (session_launched(t->s))
			launch_abort(session_launched(t->s));
		return 1;
	}
	if (session_launched(t->s) && (ret = release(t)) != 0) {
		if (t->interrupted)	/* an empty trace, ended */
			session_finish(t->s);
		return ret;
	}
	trace_loop(t);
	session_finish(t->s);
	if (o->interval_ns)
		print_sites(t, clock_ns(CLOCK_MONOTONIC));
	return session_launched(t->s) && session_exited(t->s) ? session_exit_status(t->s) : 0;
}

int trace_one_run(const struct tracer_opts *o)
{
	struct trace_one t = { .o = o, .sigfd = -1 };
	int ret;

	if (session_check_privileges())
		return 1;
	t.s = session_new(o, NULL, o->interval_ns || o->http_addr);
	if (!t.s) {
		fail("out of memory\n");
		return 1;
	}
	ret = run(&t);
	http_endpoint_stop(t.http);
	session_free(t.s);
	if (t.sigfd >= 0)
		close(t.sigfd);
	return ret;
}
