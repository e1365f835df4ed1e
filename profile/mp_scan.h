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

#endif /* ALYS_CONV_MP_SCAN_H */
