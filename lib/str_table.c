// SPDX-License-Identifier: MIT
#include "lib/str_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *must(void *p)
{
	if (!p) {
		fprintf(stderr, "out of memory (string table)\n");
		exit(1);
	}
	return p;
}

/* FNV-1a: names are short and this runs once per distinct string. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void rehash(struct str_table *st, size_t n)
{
	free(st->slot);
	st->slot = must(calloc(n, sizeof(*st->slot)));
	st->mask = n - 1;
	for (size_t i = 0; i < st->nr; i++) {
		size_t h = hash_str(st->str[i]) & st->mask;

		while (st->slot[h])
			h = (h + 1) & st->mask;
		st->slot[h] = (uint32_t)i + 1;
	}
}

static uint32_t add(struct str_table *st, const char *s, size_t h)
{
	if (st->nr == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 64;
		st->str = must(realloc(st->str, st->cap * sizeof(*st->str)));
	}
	st->str[st->nr] = must(strdup(s));
	st->slot[h] = (uint32_t)++st->nr;
	if (st->nr * 2 > st->mask)
		rehash(st, (st->mask + 1) * 2);
	return (uint32_t)st->nr - 1;
}

void str_table_init(struct str_table *st)
{
	memset(st, 0, sizeof(*st));
	rehash(st, 256);
	add(st, "", hash_str("") & st->mask);
}

void str_table_free(struct str_table *st)
{
	for (size_t i = 0; i < st->nr; i++)
		free(st->str[i]);
	free(st->str);
	free(st->slot);
	memset(st, 0, sizeof(*st));
}

uint32_t str_table_find(const struct str_table *st, const char *s)
{
	if (!s || !*s)
		return 0;
	for (size_t h = hash_str(s) & st->mask; st->slot[h]; h = (h + 1) & st->mask)
		if (!strcmp(st->str[st->slot[h] - 1], s))
			return st->slot[h] - 1;
	return UINT32_MAX;
}

uint32_t str_table_intern(struct str_table *st, const char *s)
{
	size_t h;

	if (!s || !*s)
		return 0;
	for (h = hash_str(s) & st->mask; st->slot[h]; h = (h + 1) & st->mask)
		if (!strcmp(st->str[st->slot[h] - 1], s))
			return st->slot[h] - 1;
	return add(st, s, h);
}
