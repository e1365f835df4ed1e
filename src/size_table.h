/* SPDX-License-Identifier: MIT */
/* Requested size of each block the tracer saw allocated, by address, so a
 * realloc or free record can carry the old size. */
#ifndef ALYS_SIZE_TABLE_H
#define ALYS_SIZE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct size_table {
	uint64_t *keys;		/* 0: empty */
	uint64_t *vals;
	size_t cap, used;
};

void size_table_put(struct size_table *t, uint64_t addr, uint64_t size);
/* Removes and returns the size of addr, 0 if unknown. */
uint64_t size_table_take(struct size_table *t, uint64_t addr);
/* The size of addr, 0 if unknown; the entry stays. */
uint64_t size_table_get(const struct size_table *t, uint64_t addr);
void size_table_free(struct size_table *t);

#endif
