/* SPDX-License-Identifier: MIT */
/*
 * Buffered output with the number and JSON-string formatting the writers
 * need. Output for 10 million events is written through one 1 MiB buffer
 * with no allocation per event and no stdio formatting in the hot path.
 * With fd < 0 the buffer just grows: used to prerender text fragments.
 */
#ifndef ALYS_CONV_OUTBUF_H
#define ALYS_CONV_OUTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct outbuf {
	int fd;			/* < 0: in-memory, grows */
	char *buf;
	size_t len, cap;
	int error;		/* first errno from write(2), 0 if none */
};

void outbuf_init(struct outbuf *o, int fd);
void outbuf_release(struct outbuf *o);
/* Make room for n more bytes (flushes or grows). */
void outbuf_reserve(struct outbuf *o, size_t n);
/* Write out what is buffered; returns 0 or the first write error's errno. */
int outbuf_flush(struct outbuf *o);

static inline void outbuf_write(struct outbuf *o, const void *p, size_t n)
{
	if (o->cap - o->len < n)
		outbuf_reserve(o, n);
	if (o->cap - o->len >= n) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
	}
}

static inline void outbuf_char(struct outbuf *o, char c)
{
	if (o->len == o->cap)
		outbuf_reserve(o, 1);
	o->buf[o->len++] = c;
}

static inline void outbuf_str(struct outbuf *o, const char *s)
{
	outbuf_write(o, s, strlen(s));
}

/* printf into the buffer, never truncated (report lines, SVG elements:
 * not for the per-event hot path). */
void outbuf_printf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void outbuf_u64(struct outbuf *o, uint64_t v);
void outbuf_i64(struct outbuf *o, int64_t v);
/* "0x" followed by lowercase hex digits, no padding. */
void outbuf_hex(struct outbuf *o, uint64_t v);

/* A JSON string literal with quotes: control characters escaped, invalid
 * UTF-8 sequences replaced by U+FFFD so the output always parses. */
void outbuf_json_string(struct outbuf *o, const char *s, size_t len);

#endif /* ALYS_CONV_OUTBUF_H */
