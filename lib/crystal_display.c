// SPDX-License-Identifier: MIT
#include "lib/crystal_display.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crystal_names.h"
#include "lib/str_table.h"
#include "lib/util.h"

/* A union is cut after its first member when it has this many members, or
 * three and this many bytes: "(Int32 | String | Nil)" stays whole. */
#define UNION_MEMBERS_CUT 4
#define UNION_BYTES_CUT 40

struct text {
	char *out;
	size_t len, cap;	/* cap: outlen - 1; len may pass it (cut) */
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->len < t->cap) {
		size_t k = n < t->cap - t->len ? n : t->cap - t->len;

		memcpy(t->out + t->len, s, k);
	}
	t->len += n;
}

static void put_str(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

/* NUL-terminate, cut at a character boundary; the length written, or
 * the length wanted when there is no room at all. */
static size_t finish(struct text *t, size_t outlen)
{
	size_t end;

	if (!outlen)
		return t->len;
	end = t->len < t->cap ? t->len : t->cap;
	if (t->len > t->cap)	/* cut: not inside a UTF-8 sequence */
		while (end && ((unsigned char)t->out[end] & 0xc0) == 0x80)
			end--;
	t->out[end] = '\0';
	return end;
}

/* The end of the depth-0 item of s[0..n) that starts at s: at a ',' or
 * '|' (whichever stop is) outside parentheses, or at n. */
static size_t item_end(const char *s, size_t n, char stop)
{
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '(')
			depth++;
		else if (s[i] == ')')
			depth--;
		else if (!depth && s[i] == stop)
			return i;
	}
	return n;
}

static void put_list(struct text *t, const char *s, size_t n, bool cut);

/* Each depth-0 item of s[0..n) between stop characters, by put_item. */
static void put_items(struct text *t, const char *s, size_t n, char stop,
		      void (*put_item)(struct text *, const char *, size_t, bool), bool cut)
{
	for (size_t i = 0; i < n;) {
		size_t e = i + item_end(s + i, n - i, stop);

		put_item(t, s + i, e - i, cut);
		if (e < n)
			put(t, &stop, 1);
		i = e + 1;
	}
}

/* A type without unions at its top: parenthesized parts as lists. */
static void put_plain(struct text *t, const char *s, size_t n, bool cut)
{
	size_t i = 0;

	while (i < n) {
		const char *open = memchr(s + i, '(', n - i);
		size_t o, close;
		int depth = 0;

		if (!open) {
			put(t, s + i, n - i);
			return;
		}
		o = (size_t)(open - s);
		for (close = o; close < n; close++) {
			depth += s[close] == '(' ? 1 : s[close] == ')' ? -1 : 0;
			if (!depth)
				break;
		}
		put(t, s + i, o + 1 - i);
		put_list(t, s + o + 1, (close < n ? close : n) - o - 1, cut);
		if (close < n)
			put(t, ")", 1);
		i = close + 1;
	}
}

/* One type, maybe a union "A | B | C". */
static void put_union(struct text *t, const char *s, size_t n, bool cut)
{
	size_t members = 1, first = item_end(s, n, '|');

	for (size_t i = first; i < n; i = i + 1 + item_end(s + i + 1, n - i - 1, '|'))
		members++;
	if (cut && (members >= UNION_MEMBERS_CUT || (members == 3 && n > UNION_BYTES_CUT))) {
		while (first && s[first - 1] == ' ')
			first--;
		put_plain(t, s, first, cut);
		put_str(t, " | …");
		return;
	}
	put_items(t, s, n, '|', put_plain, cut);
}

/* "A, B | C": a type's parameters or a method's argument types. */
static void put_list(struct text *t, const char *s, size_t n, bool cut)
{
	put_items(t, s, n, ',', put_union, cut);
}

/* A type private to a file is named after the file's path:
 * "/usr/lib/crystal/lib/raise.cr::LEBReader". Its name alone is shown. */
static void put_owner(struct text *t, const char *s, size_t n, bool cut)
{
	if (n && s[0] == '/') {
		for (size_t i = n; i >= 5; i--)
			if (!memcmp(s + i - 5, ".cr::", 5)) {
				s += i;
				n -= i;
				break;
			}
	}
	put_union(t, s, n, cut);
}

bool crystal_proc_place(const char *name, const char **file, size_t *file_len,
			unsigned long *line)
{
	const char *at = strrchr(name, '@'), *where, *colon;

	if (!strncmp(name, "~proc", 5) && at)
		where = at + 1;
	else if (name[0] == '/')
		where = name;
	else
		return false;
	colon = strrchr(where, ':');
	if (!colon || colon == where || !colon[1] || colon[1] < '0' || colon[1] > '9' ||
	    colon - where < 3 || memcmp(colon - 3, ".cr", 3))
		return false;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	*file = where;
	*file_len = (size_t)(colon - where);
	*line = strtoul(colon + 1, NULL, 10);
	return true;
}

/* A proc literal by its place: "proc@fiber.cr:98". */
static bool put_proc(struct text *t, const char *name)
{
	const char *file;
	size_t len;
	unsigned long line;

	if (!crystal_proc_place(name, &file, &len, &line))
		return false;
	put_str(t, "proc@");
	put_str(t, base_name(file));
	return true;
}

/* "~CUSTOMERS:init", "~Fiber::stack_pool:read": a constant's (or class
 * variable's) initializer or reader, shown without the '~'. */
static bool put_constant(struct text *t, const char *name)
{
	size_t n = strlen(name);

	if (name[0] != '~' || n < 7 ||
	    (strcmp(name + n - 5, ":init") && strcmp(name + n - 5, ":read")))
		return false;
	put_str(t, name + 1);
	return true;
}

size_t crystal_display(const char *name, enum crystal_detail detail, char *out,
		       size_t outlen)
{
	struct text t = { .out = out, .cap = outlen ? outlen - 1 : 0 };
	bool cut = detail <= CRYSTAL_WITH_ARGS, args = detail >= CRYSTAL_WITH_ARGS;
	struct crystal_sym s;

	if (detail == CRYSTAL_SYMBOL) {
		/* without the '*': a name unlike its symbol, which pprof would
		 * shorten as if it were C++ */
		put_str(&t, name[0] == '*' && name[1] ? name + 1 : name);
	} else if (!crystal_parse(name, &s)) {
		if (!put_proc(&t, name) && !put_constant(&t, name))
			put_str(&t, name);
	} else {
		/* a private top-level method: "/path/file.cr::helper" */
		bool file_owner = s.owner_len > 3 && s.owner[0] == '/' &&
				  !memcmp(s.owner + s.owner_len - 3, ".cr", 3);

		if (s.sep && !file_owner) {
			put_owner(&t, s.owner, s.owner_len, cut);
			if (detail == CRYSTAL_WITH_DEFINER && s.definer_len) {
				put(&t, "@", 1);
				put(&t, s.definer, s.definer_len);
			}
			put(&t, &s.sep, 1);
		}
		put(&t, s.method, s.method_len);
		if (args) {
			put(&t, s.named, s.named_len);
			put(&t, "(", 1);
			if (s.args)
				put_list(&t, s.args, s.args_len, cut);
			put(&t, ")", 1);
		}
	}
	return finish(&t, outlen);
}

size_t crystal_type_display(const char *type, size_t n, char *out, size_t outlen)
{
	struct text t = { .out = out, .cap = outlen ? outlen - 1 : 0 };

	put_owner(&t, type, n, true);
	return finish(&t, outlen);
}

/* ---- telling apart the symbols of one program ---- */

struct crystal_namer {
	struct str_table syms;
	char **shown;		/* by symbol index, once built */
	bool built;
};

static void *must(void *p)
{
	if (!p) {
		fprintf(stderr, "out of memory (names)\n");
		exit(1);
	}
	return p;
}

struct crystal_namer *crystal_namer_new(void)
{
	struct crystal_namer *n = must(calloc(1, sizeof(*n)));

	str_table_init(&n->syms);
	return n;
}

void crystal_namer_free(struct crystal_namer *n)
{
	if (!n)
		return;
	if (n->shown)
		for (size_t i = 0; i < n->syms.nr; i++)
			free(n->shown[i]);
	free(n->shown);
	str_table_free(&n->syms);
	free(n);
}

void crystal_namer_add(struct crystal_namer *n, const char *symbol)
{
	if (!n->built)
		str_table_intern(&n->syms, symbol);
}

static char *display_dup(const char *name, enum crystal_detail d)
{
	size_t len = crystal_display(name, d, NULL, 0);
	char *s = must(malloc(len + 1));

	crystal_display(name, d, s, len + 1);
	return s;
}

/* Each name at the least detail that no other symbol shows alike. */
static void build(struct crystal_namer *n)
{
	size_t nr = n->syms.nr;
	uint32_t *id = must(calloc(nr, sizeof(*id)));
	bool *pending = must(malloc(nr));

	n->built = true;
	n->shown = must(calloc(nr, sizeof(*n->shown)));
	memset(pending, 1, nr);
	for (enum crystal_detail d = CRYSTAL_SHORT; d <= CRYSTAL_SYMBOL; d++) {
		struct str_table shown;
		uint32_t *uses;

		str_table_init(&shown);
		for (size_t i = 1; i < nr; i++) {
			if (!pending[i])
				continue;
			free(n->shown[i]);
			n->shown[i] = display_dup(str_table_get(&n->syms, (uint32_t)i), d);
			id[i] = str_table_intern(&shown, n->shown[i]);
		}
		uses = must(calloc(shown.nr, sizeof(*uses)));
		for (size_t i = 1; i < nr; i++)
			if (pending[i])
				uses[id[i]]++;
		for (size_t i = 1; i < nr; i++)
			if (pending[i] && uses[id[i]] == 1)
				pending[i] = false;
		free(uses);
		str_table_free(&shown);
	}
	free(id);
	free(pending);
}

/* What name is shown as: the text and the detail crystal_display gives it. */
static const char *shown_form(struct crystal_namer *n, const char *name,
			      enum crystal_detail *detail)
{
	uint32_t i;

	*detail = CRYSTAL_SHORT;
	if (!n)
		return name;
	if (!n->built)
		build(n);
	i = str_table_find(&n->syms, name);
	if (i == UINT32_MAX || !i)
		return name;
	*detail = CRYSTAL_SYMBOL;	/* settled by build(), kept as it is */
	return n->shown[i];
}

size_t crystal_namer_display(struct crystal_namer *n, const char *name, char *out,
			     size_t outlen)
{
	enum crystal_detail d;
	const char *text = shown_form(n, name, &d);

	return crystal_display(text, d, out, outlen);
}

char *crystal_namer_dup(struct crystal_namer *n, const char *name)
{
	enum crystal_detail d;
	const char *text = shown_form(n, name, &d);

	return display_dup(text, d);
}
