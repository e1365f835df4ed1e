// SPDX-License-Identifier: MIT
#include "profile/outbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/util.h"

#define OUTBUF_SIZE (1u << 20)

void outbuf_init(struct outbuf *o, int fd)
{
	o->fd = fd;
	o->len = 0;
	o->cap = fd < 0 ? 256 : OUTBUF_SIZE;
	o->buf = xmalloc(o->cap);
	o->error = 0;
}

void outbuf_release(struct outbuf *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

int outbuf_flush(struct outbuf *o)
{
	size_t done = 0;

	if (o->fd < 0)
		return 0;
	while (done < o->len && !o->error) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->error = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	/* After an error keep discarding: the caller checks o->error once. */
	o->len = 0;
	return o->error;
}

void outbuf_reserve(struct outbuf *o, size_t n)
{
	if (o->fd >= 0) {
		outbuf_flush(o);
		if (n <= o->cap)
			return;
	}
	o->buf = grow_array(o->buf, &o->cap, o->len + n, 1);
}

void outbuf_printf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	outbuf_reserve(o, (size_t)n + 1);	/* vsnprintf writes a NUL */
	if (o->cap - o->len < (size_t)n + 1)
		return;
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

void outbuf_u64(struct outbuf *o, uint64_t v)
{
	char tmp[20];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	outbuf_write(o, tmp + i, sizeof(tmp) - (size_t)i);
}

void outbuf_i64(struct outbuf *o, int64_t v)
{
	if (v < 0) {
		outbuf_char(o, '-');
		outbuf_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		outbuf_u64(o, (uint64_t)v);
	}
}

void outbuf_hex(struct outbuf *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[18];
	int i = sizeof(tmp);

	do {
		tmp[--i] = digits[v & 0xf];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	outbuf_write(o, tmp + i, sizeof(tmp) - (size_t)i);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void outbuf_json_string(struct outbuf *o, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, plain = 0;

	outbuf_char(o, '"');
	while (i < len) {
		unsigned char c = s[i];
		size_t n;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		n = c < 0x80 ? 1 : utf8_valid_len(s + i, len - i);
		if (n > 1) {
			i += n;
			continue;
		}
		/* flush the run of bytes that needed no escaping */
		outbuf_write(o, s + plain, i - plain);
		switch (c) {
		case '"': outbuf_write(o, "\\\"", 2); break;
		case '\\': outbuf_write(o, "\\\\", 2); break;
		case '\n': outbuf_write(o, "\\n", 2); break;
		case '\r': outbuf_write(o, "\\r", 2); break;
		case '\t': outbuf_write(o, "\\t", 2); break;
		default:
			if (c < 0x20) {
				char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf] };

				outbuf_write(o, esc, sizeof(esc));
			} else {
				outbuf_write(o, "\\ufffd", 6);	/* invalid UTF-8 byte */
			}
		}
		plain = ++i;
	}
	outbuf_write(o, s + plain, i - plain);
	outbuf_char(o, '"');
}
