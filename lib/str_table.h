/* SPDX-License-Identifier: MIT */
/*
 * Interned strings, the one string table of the converter: each distinct
 * string is stored once and known by a dense index, in the order first
 * seen. Index 0 is "" (profile.proto requires it of its string table; the
 * model's type table uses it for "no type"). Running out of memory ends
 * the program with a message, as u64_table does.
 */
#ifndef ALYS_STR_TABLE_H
#define ALYS_STR_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct str_table {
	char **str;		/* str[i]: NUL-terminated copy */
	size_t nr, cap;
	uint32_t *slot;		/* open addressing: index + 1, 0 empty */
	size_t mask;
};

void str_table_init(struct str_table *st);
void str_table_free(struct str_table *st);

/* The index of s, added if new; NULL and "" are index 0. */
uint32_t str_table_intern(struct str_table *st, const char *s);

/* The index of s, or UINT32_MAX when it is not in the table. */
uint32_t str_table_find(const struct str_table *st, const char *s);

static inline const char *str_table_get(const struct str_table *st, uint32_t i)
{
	return st->str[i];
}

#endif /* ALYS_STR_TABLE_H */
