/* SPDX-License-Identifier: MIT */
/*
 * Small helpers of both programs: allocation that cannot fail silently,
 * and the one place that formats diagnostics.
 */
#ifndef ALYS_LIB_UTIL_H
#define ALYS_LIB_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The program diagnostics are prefixed with: "alys_converter" unless the
 * daemon's main says otherwise (before any message). */
extern const char *prog_name;

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc_array(void *ptr, size_t nmemb, size_t size);
char *xmemdup_str(const char *src, size_t len);
/* A malloc'd printf (exits when out of memory, as xmalloc does). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The file name of a path (after its last '/'); NULL for NULL. */
const char *base_name(const char *path);

/* Grow *cap (at least doubling) so that it holds need items. */
void *grow_array(void *ptr, size_t *cap, size_t need, size_t item_size);

void warnx_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational notes (stripped libraries and the like): one line each,
 * silenced by -q. Warnings and errors are never silenced. */
void note_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int notes_quiet;	/* -q: no notes */
void errx_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "prog: " and the text as given, which ends its own line(s): errors
 * always (the daemon's messages). */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same unless quiet (-q). */
#define say_unless(quiet, ...) do { if (!(quiet)) fail(__VA_ARGS__); } while (0)

#endif /* ALYS_LIB_UTIL_H */
