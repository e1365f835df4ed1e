/* SPDX-License-Identifier: MIT */
/*
 * Bounds-check one MessagePack object before msgpack-c decodes it.
 *
 * msgpack_unpack_next() allocates every array and map up front from the
 * element count in the header, so a five-byte "array of 4 billion" would make
 * it ask for ~100 GB.  Walking the headers first lets the reader refuse any
 * count that the remaining file bytes could not hold (every element takes at
 * least one byte), tell "the file ends inside this object" from "these bytes
 * are not MessagePack", and cap nesting below msgpack-c's own limit.
 */
#ifndef ALYS_CONV_MP_SCAN_H
#define ALYS_CONV_MP_SCAN_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deeper than any record needs (3), well below msgpack-c's limit (32). */
#define MP_SCAN_MAX_DEPTH 16

enum mp_scan_result {
	MP_SCAN_OK,	/* *span holds the object's size in bytes */
	MP_SCAN_SHORT,	/* the object runs past the end of the buffer */
	MP_SCAN_BAD,	/* not MessagePack, or nested too deeply; see *why */
};

enum mp_scan_result mp_scan_object(const uint8_t *buf, size_t len,
				   size_t *span, const char **why);

/*
 * Objects decoded one after another into one zone, cleared between them:
 * msgpack_unpack_next() makes and frees a zone (an 8 KiB malloc) for every
 * object, which took a tenth of the reader's time, and most of it under
 * ASan (which fills and quarantines each). obj stays valid until the next
 * mp_decode, and points into buf.
 */
struct mp_decoder {
	msgpack_zone *zone;
	msgpack_object obj;
	msgpack_object flat[15];	/* mp_decode_flat's elements */
};

/* Decode the object at *off, which mp_scan_object found to end at end;
 * *off moves past it. False: out of memory, or msgpack-c refused it. */
bool mp_decode(struct mp_decoder *d, const char *buf, size_t end, size_t *off);
void mp_decoder_free(struct mp_decoder *d);

/*
 * The common record, an array of up to 15 integers, nil or booleans (an
 * event, a death), decoded without msgpack-c into the objects it would
 * make: its decoder and zone took a sixth of a reading. False, and *off
 * unchanged, for anything else or anything not whole in buf[*off, len):
 * mp_scan_object and mp_decode then read it, or say what is wrong.
 */
bool mp_decode_flat(struct mp_decoder *d, const uint8_t *buf, size_t len, size_t *off);

enum mp_next {
	MP_NEXT_OK,
	MP_NEXT_SHORT,	/* the object runs past len */
	MP_NEXT_BAD,	/* not MessagePack, or nested too deeply; see *why */
	MP_NEXT_NOMEM,	/* msgpack-c refused it (out of memory?) */
};

/* The object at *off of buf[0, len) into d, *off moved past it: the common
 * record by mp_decode_flat, any other bounds-checked by mp_scan_object and
 * then handed to msgpack-c, exactly the checked span. A reader's one way
 * to the next object, in a file or in a block. */
enum mp_next mp_decode_next(struct mp_decoder *d, const uint8_t *buf, size_t len, size_t *off,
			    const char **why);

#endif /* ALYS_CONV_MP_SCAN_H */
