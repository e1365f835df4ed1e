/* SPDX-License-Identifier: MIT */
/*
 * --all: every Crystal process on the host, those running at start and
 * those that start later (exec_watch.h), each its own session (its own
 * BPF program, mappings, liveness and counters; the unwind tables are
 * shared), detached as it exits. Their profiles are pushed (pusher.h) and
 * counted in /metrics (--http).
 */
#ifndef ALYS_AGENT_H
#define ALYS_AGENT_H

#include "agent/pusher.h"
#include "core/session.h"

#define AGENT_MAX_COMM 32

struct agent_opts {
	const char *only_comm[AGENT_MAX_COMM];	/* --only-comm: these names only */
	unsigned n_only;
	const char *exclude_comm[AGENT_MAX_COMM];	/* --exclude-comm */
	unsigned n_exclude;
	const char *service;	/* --service: service_name for all; NULL: the executable's */
	bool push;
	struct push_opts push_opts;
};

/* Until SIGINT, SIGTERM or SIGHUP; returns alys-bpf's exit status. */
int agent_run(const struct tracer_opts *o);

#endif
