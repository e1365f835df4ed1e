// SPDX-License-Identifier: MIT
#include "lib/util.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *prog_name = "alys_converter";

static void out_of_memory(size_t nmemb, size_t size)
{
	fprintf(stderr, "%s: out of memory allocating %zu x %zu bytes; "
		"convert on a machine with more memory or limit the trace\n",
		prog_name, nmemb, size);
	exit(1);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		out_of_memory(1, size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		out_of_memory(nmemb, size);
	return p;
}

void *xrealloc_array(void *ptr, size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / size)
		out_of_memory(nmemb, size);
	p = realloc(ptr, nmemb && size ? nmemb * size : 1);
	if (!p)
		out_of_memory(nmemb, size);
	return p;
}

char *xmemdup_str(const char *src, size_t len)
{
	char *s = xmalloc(len + 1);

	if (len)
		memcpy(s, src, len);
	s[len] = '\0';
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0)
		out_of_memory(1, strlen(fmt));
	va_end(ap);
	return out;
}

void *grow_array(void *ptr, size_t *cap, size_t need, size_t item_size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return ptr;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			out_of_memory(need, item_size);
		n *= 2;
	}
	ptr = xrealloc_array(ptr, n, item_size);
	*cap = n;
	return ptr;
}

/* "prog: KIND message" on stderr, ending the line unless the message
 * does (fail's), held together whatever other threads say. */
static void message(const char *kind, bool end_line, const char *fmt, va_list ap)
{
	flockfile(stderr);
	fprintf(stderr, "%s: %s", prog_name, kind);
	vfprintf(stderr, fmt, ap);
	if (end_line)
		fputc('\n', stderr);
	funlockfile(stderr);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message("", false, fmt, ap);
	va_end(ap);
}

void warnx_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message("warning: ", true, fmt, ap);
	va_end(ap);
}

int notes_quiet;

void note_msg(const char *fmt, ...)
{
	va_list ap;

	if (notes_quiet)
		return;
	va_start(ap, fmt);
	message("note: ", true, fmt, ap);
	va_end(ap);
}

void errx_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message("", true, fmt, ap);
	va_end(ap);
}

const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}
