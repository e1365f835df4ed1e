/* SPDX-License-Identifier: MIT */
/* The daemon's messages on stderr: "alys-bpf: " and the text, which ends
 * its own line. Errors always; the rest unless -q. */
#ifndef ALYS_MESSAGES_H
#define ALYS_MESSAGES_H

#include <stdio.h>

#define fail(...) fprintf(stderr, "alys-bpf: " __VA_ARGS__)
#define say_unless(quiet, ...) do { if (!(quiet)) fail(__VA_ARGS__); } while (0)

#endif
