/* SPDX-License-Identifier: MIT */
/* The signals that stop or steer a mode, read from a signalfd in its loop
 * instead of interrupting it. */
#ifndef ALYS_SIGNALS_H
#define ALYS_SIGNALS_H

#include <stdbool.h>

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT (and SIGUSR1 if asked) blocked and
 * readable from the returned fd; SIGPIPE ignored, so that a closed pipe
 * cannot kill the tracer before it writes the end. -1 on failure. */
int signals_open(bool with_usr1);

#endif
