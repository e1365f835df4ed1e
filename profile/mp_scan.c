// SPDX-License-Identifier: MIT
#include "profile/mp_scan.h"

static uint64_t load_be(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * Decode the header of the item at buf[0]: how many bytes it occupies before
 * any child items (*head, including inline payload), and how many child items
 * follow (*children: array elements, or keys plus values of a map).
 * Returns 0, or -1 for the one byte MessagePack never uses.
 */
static int item_header(const uint8_t *buf, size_t avail, uint64_t *head,
		       uint64_t *children, int *short_read)
{
	uint8_t b = buf[0];
	unsigned int len_bytes = 0;	/* size of an explicit length field */
	uint64_t fixed = 1;		/* bytes before the length-dependent part */
	int kind = 0;			/* 0 payload, 1 array, 2 map */

	*children = 0;
	*short_read = 0;
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
		*head = 1;
		return 0;
	}
	if (b >= 0x80 && b <= 0x8f) {
		*head = 1;
		*children = 2ULL * (b & 0x0f);
		return 0;
	}
	if (b >= 0x90 && b <= 0x9f) {
		*head = 1;
		*children = b & 0x0f;
		return 0;
	}
	if (b >= 0xa0 && b <= 0xbf) {
		*head = 1 + (b & 0x1f);
		return 0;
	}
	switch (b) {
	case 0xc1:
		return -1;
	case 0xc4: case 0xd9: len_bytes = 1; break;	/* bin8, str8 */
	case 0xc5: case 0xda: len_bytes = 2; break;	/* bin16, str16 */
	case 0xc6: case 0xdb: len_bytes = 4; break;	/* bin32, str32 */
	case 0xc7: len_bytes = 1; fixed = 2; break;	/* ext8: + type byte */
	case 0xc8: len_bytes = 2; fixed = 2; break;
	case 0xc9: len_bytes = 4; fixed = 2; break;
	case 0xca: *head = 5; return 0;		/* float32 */
	case 0xcb: *head = 9; return 0;		/* float64 */
	case 0xcc: case 0xd0: *head = 2; return 0;
	case 0xcd: case 0xd1: *head = 3; return 0;
	case 0xce: case 0xd2: *head = 5; return 0;
	case 0xcf: case 0xd3: *head = 9; return 0;
	case 0xd4: *head = 3; return 0;		/* fixext 1..16 */
	case 0xd5: *head = 4; return 0;
	case 0xd6: *head = 6; return 0;
	case 0xd7: *head = 10; return 0;
	case 0xd8: *head = 18; return 0;
	case 0xdc: len_bytes = 2; kind = 1; break;
	case 0xdd: len_bytes = 4; kind = 1; break;
	case 0xde: len_bytes = 2; kind = 2; break;
	case 0xdf: len_bytes = 4; kind = 2; break;
	default:
		return -1;
	}
	if (avail < 1 + (uint64_t)len_bytes) {
		*short_read = 1;
		return 0;
	}
	{
		uint64_t n = load_be(buf + 1, len_bytes);

		if (kind == 0) {
			*head = fixed + len_bytes + n;
		} else {
			*head = 1 + len_bytes;
			*children = kind == 2 ? 2 * n : n;
		}
	}
	return 0;
}

enum mp_scan_result mp_scan_object(const uint8_t *buf, size_t len,
				   size_t *span, const char **why)
{
	uint64_t left[MP_SCAN_MAX_DEPTH];	/* items still due per level */
	unsigned int depth = 0;
	size_t pos = 0;
	int started = 0;

	*why = NULL;
	for (;;) {
		uint64_t head, children;
		int short_read;

		while (depth > 0 && left[depth - 1] == 0)
			depth--;
		if (started && depth == 0)
			break;
		started = 1;
		if (pos >= len)
			return MP_SCAN_SHORT;
		if (item_header(buf + pos, len - pos, &head, &children, &short_read)) {
			*why = "byte 0xc1 is not valid MessagePack";
			return MP_SCAN_BAD;
		}
		if (short_read || head > len - pos)
			return MP_SCAN_SHORT;
		pos += head;
		if (depth > 0)
			left[depth - 1]--;
		if (children == 0)
			continue;
		/* Each child takes at least one byte: a larger count cannot be
		 * satisfied by this file, whatever it claims. */
		if (children > len - pos)
			return MP_SCAN_SHORT;
		if (depth == MP_SCAN_MAX_DEPTH) {
			*why = "objects nested more than 16 levels deep";
			return MP_SCAN_BAD;
		}
		left[depth++] = children;
	}
	*span = pos;
	return MP_SCAN_OK;
}

bool mp_decode(struct mp_decoder *d, const char *buf, size_t end, size_t *off)
{
	size_t pos = *off;
	msgpack_unpack_return ret;

	if (!d->zone)
		d->zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
	else
		msgpack_zone_clear(d->zone);
	if (!d->zone)
		return false;
	/* msgpack_unpack: msgpack-c's decoder into a zone of the caller's */
	ret = msgpack_unpack(buf, end, &pos, d->zone, &d->obj);
	if (ret != MSGPACK_UNPACK_SUCCESS || pos != end)
		return false;
	*off = pos;
	return true;
}

void mp_decoder_free(struct mp_decoder *d)
{
	if (d->zone)
		msgpack_zone_free(d->zone);
	d->zone = NULL;
}

bool mp_decode_flat(struct mp_decoder *d, const uint8_t *buf, size_t len, size_t *off)
{
	size_t pos = *off;
	unsigned int n;

	if (pos >= len || (buf[pos] & 0xf0) != 0x90)
		return false;
	n = buf[pos++] & 0x0f;
	for (unsigned int i = 0; i < n; i++) {
		msgpack_object *o = &d->flat[i];
		unsigned int bytes;
		uint64_t v;
		uint8_t b;

		if (pos >= len)
			return false;
		b = buf[pos++];
		if (b <= 0x7f) {		/* positive fixint */
			o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
			o->via.u64 = b;
			continue;
		}
		if (b >= 0xe0) {		/* negative fixint */
			o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
			o->via.i64 = (int8_t)b;
			continue;
		}
		if (b == 0xc0 || b == 0xc2 || b == 0xc3) {
			o->type = b == 0xc0 ? MSGPACK_OBJECT_NIL : MSGPACK_OBJECT_BOOLEAN;
			o->via.u64 = 0;
			o->via.boolean = b == 0xc3;
			continue;
		}
		if (b < 0xcc || b > 0xd3)
			return false;
		bytes = 1u << ((b - 0xcc) & 3);
		if (len - pos < bytes)
			return false;
		v = load_be(buf + pos, bytes);
		pos += bytes;
		if (b <= 0xcf) {		/* uint 8-64 */
			o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
			o->via.u64 = v;
			continue;
		}
		/* int 8-64: sign-extended; msgpack-c makes one >= 0 positive */
		if (bytes < 8 && v >> (8 * bytes - 1))
			v |= ~0ULL << (8 * bytes);
		o->type = (int64_t)v < 0 ? MSGPACK_OBJECT_NEGATIVE_INTEGER
					 : MSGPACK_OBJECT_POSITIVE_INTEGER;
		o->via.u64 = v;
	}
	d->obj = (msgpack_object){ .type = MSGPACK_OBJECT_ARRAY,
				   .via.array = { .size = n, .ptr = n ? d->flat : NULL } };
	*off = pos;
	return true;
}

enum mp_next mp_decode_next(struct mp_decoder *d, const uint8_t *buf, size_t len, size_t *off,
			    const char **why)
{
	size_t span;

	*why = NULL;
	if (mp_decode_flat(d, buf, len, off))
		return MP_NEXT_OK;
	switch (mp_scan_object(buf + *off, len - *off, &span, why)) {
	case MP_SCAN_SHORT:
		return MP_NEXT_SHORT;
	case MP_SCAN_BAD:
		return MP_NEXT_BAD;
	case MP_SCAN_OK:
		break;
	}
	return mp_decode(d, (const char *)buf, *off + span, off) ? MP_NEXT_OK : MP_NEXT_NOMEM;
}
