/* SPDX-License-Identifier: MIT */
/* One process, launched or attached to, traced until it exits or a signal
 * detaches: the session, the signals, --interval, --http and SIGUSR1's
 * heap snapshots around it. */
#ifndef ALYS_TRACE_ONE_H
#define ALYS_TRACE_ONE_H

#include "core/session.h"

/* Returns the process exit status to use for alys-bpf itself. */
int trace_one_run(const struct tracer_opts *o);

#endif
