/* SPDX-License-Identifier: MIT */
/*
 * LEB128 numbers of .eh_frame, for unwind_table.c's section walk and
 * cfa_program.c's instructions: one reading, so a hostile file's over-long
 * number is refused the same way by both (more than 64 bits: false).
 */
#ifndef ALYS_LEB128_H
#define ALYS_LEB128_H

#include <stdbool.h>
#include <stdint.h>

static inline bool read_uleb128(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

static inline bool read_sleb128(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return false;
		b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~0ULL << shift;
	*v = (int64_t)r;
	return true;
}

#endif /* ALYS_LEB128_H */
