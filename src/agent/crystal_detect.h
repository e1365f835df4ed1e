/* SPDX-License-Identifier: MIT */
/*
 * Whether an executable is a Crystal program that allocates through the
 * Boehm GC: Crystal's entry point (__crystal_main) and libgc, linked in
 * statically (GC_malloc defined) or needed (DT_NEEDED libgc*). Verdicts are
 * kept per file (device, inode, change time): a host execs the same few
 * programs over and over.
 */
#ifndef ALYS_CRYSTAL_DETECT_H
#define ALYS_CRYSTAL_DETECT_H

#include <stdbool.h>
#include <stddef.h>

struct crystal_detect;

struct crystal_detect *crystal_detect_new(void);
void crystal_detect_free(struct crystal_detect *cd);
/* path: the program, e.g. /proc/PID/exe. Why not, in why (if given). */
bool crystal_detect(struct crystal_detect *cd, const char *path, char *why, size_t whylen);

#endif
