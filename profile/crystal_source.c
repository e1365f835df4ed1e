// SPDX-License-Identifier: MIT
#include "profile/crystal_source.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crystal_names.h"
#include "lib/util.h"

/* Sources larger than this are not Crystal programs we should scan. */
#define MAX_SOURCE_SIZE (16u << 20)
#define MAX_NAME 512

struct source_file {
	char *path;
	char *data;		/* NULL: unreadable */
	size_t size;
	size_t *line_start;	/* offset of line i + 1 */
	uint32_t nr_lines;
};

void source_cache_set_base(struct source_cache *sc, const char *dir)
{
	free(sc->base_dir);
	sc->base_dir = dir ? xmemdup_str(dir, strlen(dir)) : NULL;
}

/* path, or a relative path under base_dir or one of its parents. */
static FILE *open_source(const struct source_cache *sc, const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *dir, *slash;

	if (fp || path[0] == '/' || !sc->base_dir)
		return fp;
	while (!strncmp(path, "./", 2))
		path += 2;
	dir = xmemdup_str(sc->base_dir, strlen(sc->base_dir));
	while (!fp && dir[0] == '/') {
		char *full = xasprintf("%s/%s", dir, path);

		fp = fopen(full, "rb");
		free(full);
		slash = strrchr(dir, '/');
		if (slash == dir) {
			if (!dir[1])
				break;
			dir[1] = '\0';
		} else {
			*slash = '\0';
		}
	}
	free(dir);
	return fp;
}

static void load(const struct source_cache *sc, struct source_file *f)
{
	FILE *fp = open_source(sc, f->path);
	size_t cap = 0;
	long len;

	if (!fp)
		return;
	if (fseek(fp, 0, SEEK_END) || (len = ftell(fp)) < 0 ||
	    (size_t)len > MAX_SOURCE_SIZE || fseek(fp, 0, SEEK_SET))
		goto out;
	f->data = xmalloc((size_t)len + 1);
	f->size = fread(f->data, 1, (size_t)len, fp);
	f->data[f->size] = '\0';
	for (size_t i = 0; i <= f->size; i++) {
		if (i && f->data[i - 1] != '\n')
			continue;
		if (i == f->size && i)
			break;
		f->line_start = grow_array(f->line_start, &cap, f->nr_lines + 1,
					   sizeof(*f->line_start));
		f->line_start[f->nr_lines++] = i;
	}
out:
	fclose(fp);
}

static struct source_file *get_file(struct source_cache *sc, const char *path)
{
	struct source_file *f;

	for (size_t i = 0; i < sc->nr; i++)
		if (!strcmp(sc->files[i].path, path))
			return &sc->files[i];
	sc->files = grow_array(sc->files, &sc->cap, sc->nr + 1, sizeof(*sc->files));
	f = &sc->files[sc->nr++];
	memset(f, 0, sizeof(*f));
	f->path = xmemdup_str(path, strlen(path));
	load(sc, f);
	return f;
}

/* Line n (1-based) without its newline; *len its length. */
static const char *line_at(const struct source_file *f, uint32_t n, size_t *len)
{
	const char *s, *nl;

	if (!n || n > f->nr_lines)
		return NULL;
	s = f->data + f->line_start[n - 1];
	nl = strchr(s, '\n');
	*len = nl ? (size_t)(nl - s) : strlen(s);
	return s;
}

static size_t indent_of(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

static bool starts_word(const char *s, size_t len, const char *word)
{
	size_t n = strlen(word);

	return len > n && !strncmp(s, word, n) && (s[n] == ' ' || s[n] == '\t');
}

/* Past the visibility and abstract modifiers a declaration line starts with. */
static void skip_modifiers(const char **s, size_t *len)
{
	static const char *const modifiers[] = { "private ", "protected ", "abstract " };

	for (size_t i = 0; i < sizeof(modifiers) / sizeof(modifiers[0]); i++)
		if (*len > strlen(modifiers[i]) && !strncmp(*s, modifiers[i], strlen(modifiers[i]))) {
			*s += strlen(modifiers[i]);
			*len -= strlen(modifiers[i]);
		}
}

/* The type name after class/struct/module/enum/lib, or 0 if not such a line. */
static size_t type_decl(const char *s, size_t len, const char **name)
{
	static const char *const keywords[] = { "class", "struct", "module", "enum", "lib" };
	size_t n;

	skip_modifiers(&s, &len);
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++) {
		if (!starts_word(s, len, keywords[i]))
			continue;
		s += strlen(keywords[i]);
		len -= strlen(keywords[i]);
		while (len && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		/* Foo, Foo::Bar, Foo(T, U): up to a space, '<' or ';' outside parens */
		for (n = 0; n < len; n++) {
			if (s[n] == '(') {
				while (n < len && s[n] != ')')
					n++;
				continue;
			}
			if (s[n] == ' ' || s[n] == '\t' || s[n] == '<' || s[n] == ';' || s[n] == '#')
				break;
		}
		*name = s;
		return n;
	}
	return 0;
}

/* What a declaring type says of the receiver: it is that type, or a type
 * below an abstract one or a root, or (an instance method) an includer of
 * a module. */
enum { VIRT_NONE, VIRT_TYPE, VIRT_MODULE };

/*
 * Whether a type declared on line s (past its indent) is only ever a
 * receiver's ancestor: a module, an abstract type, or a root every value
 * descends from (reopened without `abstract`: `class Object`, `struct
 * Int`). A method it declares runs on some type below it.
 */
static int virtual_decl(const char *s, size_t len, const char *name, size_t nlen)
{
	/* concrete in source, but what runs is a type below them: an enum's
	 * own type, an Exception's subclass */
	static const char *const roots[] = { "Object", "Reference", "Value", "Struct",
					     "Number", "Int", "Float", "Enum", "Exception" };

	if (starts_word(s, len, "module"))
		return VIRT_MODULE;
	if (len > 9 && !strncmp(s, "abstract ", 9))
		return VIRT_TYPE;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (nlen == strlen(roots[i]) && !strncmp(name, roots[i], nlen))
			return VIRT_TYPE;
	return VIRT_NONE;
}

/* Enclosing types of line n, outermost first, joined by "::" into out;
 * *virt (if given): the innermost is virtual_decl. */
static bool owner_of(const struct source_file *f, uint32_t n, char *out, size_t outlen,
		     int *virt)
{
	const char *parts[16];
	size_t part_len[16], nparts = 0, len, threshold, pos = 0;
	const char *s = line_at(f, n, &len);

	if (!s)
		return false;
	threshold = indent_of(s, len);
	/* the type's own line: where a `new` the compiler generates for it
	 * (no initialize written) is declared */
	if (threshold < len && (part_len[0] = type_decl(s + threshold, len - threshold,
							&parts[0]))) {
		nparts = 1;
		if (virt)
			*virt = virtual_decl(s + threshold, len - threshold, parts[0], part_len[0]);
	}
	while (threshold > 0 && --n > 0 && nparts < 16) {
		size_t ind, nlen;
		const char *name;

		s = line_at(f, n, &len);
		ind = indent_of(s, len);
		if (ind == len || s[ind] == '#' || ind >= threshold)
			continue;	/* blank, comment or deeper */
		threshold = ind;
		nlen = type_decl(s + ind, len - ind, &name);
		if (nlen) {
			if (!nparts && virt)
				*virt = virtual_decl(s + ind, len - ind, name, nlen);
			parts[nparts] = name;
			part_len[nparts++] = nlen;
		} else if (len - ind >= 3 && !strncmp(s + ind, "end", 3)) {
			return false;	/* indentation does not tell */
		}
	}
	if (!nparts)
		return false;
	for (size_t i = nparts; i-- > 0;) {
		if (pos + part_len[i] + 3 >= outlen)
			return false;
		if (pos) {
			memcpy(out + pos, "::", 2);
			pos += 2;
		}
		memcpy(out + pos, parts[i], part_len[i]);
		pos += part_len[i];
	}
	out[pos] = '\0';
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* "Hash(K, V)" -> "Hash(?, ?)": the declaring type's parameters, which
 * are not the instantiation's; what they were is not in the binary. */
static void unknown_params(const char *owner, char *out, size_t outlen)
{
	size_t o = 0;
	int depth = 0;

	/* generic, with parameters the compiler declares, not the source */
	if (!strcmp(owner, "Tuple") || !strcmp(owner, "NamedTuple") || !strcmp(owner, "Proc")) {
		snprintf(out, outlen, "%s(?)", owner);
		return;
	}

	for (const char *p = owner; *p && o + 4 < outlen; p++) {
		if (*p == '(' && depth++ == 0) {
			out[o++] = '(';
			out[o++] = '?';
		} else if (*p == ')' && --depth == 0) {
			out[o++] = ')';
		} else if (*p == ',' && depth == 1) {
			out[o++] = ',';
			out[o++] = ' ';
			out[o++] = '?';
		} else if (depth == 0) {
			out[o++] = *p;
		}
	}
	out[o] = 0;
}

/* A class method by its name: `new` (generated from `def initialize`),
 * `allocate`, and a `new_*` a macro wrote (declared where the macro is
 * used, not on a def line: JSON::Serializable's new_from_json_pull_parser;
 * a written `def new_event` is an instance method); the named-argument
 * expansion ("new:id:name") counts as its method. */
static bool class_method_name(const char *name, bool on_def_line)
{
	size_t base = strcspn(name, ":");

	return (base == 3 && !strncmp(name, "new", 3)) ||
	       (!on_def_line && !strncmp(name, "new_", 4)) ||
	       (base == 8 && !strncmp(name, "allocate", 8));
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '?' || c == '!';
}

/* A type written in source: Foo, Foo::Bar, Foo(A, B(C)) (its length, 0 if
 * none); *free: a parameter is a type variable (one capital: T, K, V). */
static size_t type_literal(const char *s, size_t len, bool *free)
{
	size_t n = 0;

	*free = false;
	for (;;) {
		if (n >= len || s[n] < 'A' || s[n] > 'Z')
			return 0;
		while (n < len && ident_char(s[n]) && s[n] != '?' && s[n] != '!')
			n++;
		if (n + 2 < len && s[n] == ':' && s[n + 1] == ':') {
			n += 2;
			continue;
		}
		break;
	}
	if (n < len && s[n] == '(') {
		int depth = 0;
		size_t tok = 0;

		for (; n < len; n++) {
			char c = s[n];

			if (c == '(' || c == ')' || c == ',' || c == '|' || c == ' ') {
				/* the token that just ended: one capital letter */
				if (tok == 1 && s[n - 1] >= 'A' && s[n - 1] <= 'Z')
					*free = true;
				tok = 0;
			} else {
				tok++;
			}
			if (c == '(')
				depth++;
			else if (c == ')' && --depth == 0)
				return n + 1;
		}
		return 0;
	}
	return n;
}

static bool spell_union(const char **p, const char *end, char *out, size_t outlen, int depth);

/* One type of a written type, as Crystal spells it in symbols: {A, B} is
 * Tuple(A, B), A* Pointer(A), Bytes Slice(UInt8). */
static bool spell_one(const char **p, const char *end, char *out, size_t outlen, int depth)
{
	char inner[MAX_NAME], wrapped[MAX_NAME];
	const char *s = *p;
	size_t n = 0;
	int w;

	if (depth > 8 || s >= end)
		return false;
	if (*s == '{') {
		*p = s + 1;
		if (!spell_union(p, end, inner, sizeof(inner), depth + 1) || *p >= end || **p != '}')
			return false;
		(*p)++;
		w = snprintf(out, outlen, "Tuple(%s)", inner);
	} else {
		while (s + n < end && (ident_char(s[n]) || (s[n] == ':' && s + n + 1 < end &&
							     s[n + 1] == ':'))) {
			n += s[n] == ':' ? 2 : 1;
		}
		if (!n || s[0] < 'A' || s[0] > 'Z')
			return false;
		*p = s + n;
		if (*p < end && **p == '(') {
			(*p)++;
			if (!spell_union(p, end, inner, sizeof(inner), depth + 1) || *p >= end ||
			    **p != ')')
				return false;
			(*p)++;
			w = snprintf(out, outlen, "%.*s(%s)", (int)n, s, inner);
		} else if (n == 5 && !strncmp(s, "Bytes", 5)) {
			w = snprintf(out, outlen, "Slice(UInt8)");
		} else {
			w = snprintf(out, outlen, "%.*s", (int)n, s);
		}
	}
	if (w < 0 || (size_t)w >= outlen)
		return false;
	while (*p < end && **p == '*') {
		(*p)++;
		w = snprintf(wrapped, sizeof(wrapped), "Pointer(%s)", out);
		if (w < 0 || (size_t)w >= outlen || (size_t)w >= sizeof(wrapped))
			return false;
		memcpy(out, wrapped, (size_t)w + 1);
	}
	return true;
}

/* Types separated by ", " or " | ", up to the bracket closing them. */
static bool spell_union(const char **p, const char *end, char *out, size_t outlen, int depth)
{
	size_t o = 0;

	for (;;) {
		size_t k;

		/* a named tuple's "key: " */
		for (k = 0; *p + k < end && (ident_char((*p)[k]) && !((*p)[0] >= 'A' && (*p)[0] <= 'Z'));
		     k++)
			;
		if (k && *p + k + 1 < end && (*p)[k] == ':' && (*p)[k + 1] == ' ') {
			if (o + k + 2 >= outlen)
				return false;
			memcpy(out + o, *p, k + 2);
			o += k + 2;
			*p += k + 2;
		}
		if (!spell_one(p, end, out + o, outlen - o, depth))
			return false;
		o += strlen(out + o);
		for (k = 0; *p + k < end && (*p)[k] == ' '; k++)
			;
		if (*p + k >= end || ((*p)[k] != ',' && (*p)[k] != '|'))
			return true;
		if (o + 4 >= outlen)
			return false;
		memcpy(out + o, (*p)[k] == ',' ? ", " : " | ", (*p)[k] == ',' ? 3 : 4);
		o += (*p)[k] == ',' ? 2 : 3;
		*p += k + 1;
		while (*p < end && **p == ' ')
			(*p)++;
	}
}

/* A type written in source (n bytes at s) as its symbols spell it. */
static bool spell_type(const char *s, size_t n, char *out, size_t outlen)
{
	const char *p = s;

	return spell_union(&p, s + n, out, outlen, 0) && p == s + n;
}

/* type_literal, and also a tuple {A, B} and pointers (Void*): what may
 * follow "[] of ". */
static size_t written_type(const char *s, size_t len, bool *free)
{
	size_t n = 0;

	*free = false;
	if (len && s[0] == '{') {
		int depth = 0;

		for (; n < len; n++) {
			if (s[n] == '{' || s[n] == '(')
				depth++;
			else if ((s[n] == '}' || s[n] == ')') && --depth == 0)
				break;
			else if (s[n] >= 'A' && s[n] <= 'Z' && (n + 1 == len || !ident_char(s[n + 1])) &&
				 !ident_char(s[n - 1]))
				*free = true;	/* {T, U} */
		}
		if (n++ >= len)
			return 0;
	} else {
		n = type_literal(s, len, free);
	}
	while (n && n < len && s[n] == '*')
		n++;
	return n;
}

/* The method `base` of n bytes at s[0], a whole word. */
static bool word_at(const char *s, size_t len, const char *base, size_t n)
{
	return len >= n && !memcmp(s, base, n) && (len == n || !ident_char(s[n]));
}

/*
 * What the text at the call's column says of the receiver (the column is
 * where the call expression starts, receiver included): a type written
 * there ("Array(Item).new", "[] of String", "{} of String => Int32") into
 * out, 1; the method itself, with no receiver or `self.` (implicit self, or the `def
 * initialize` a generated `new` calls), 2; else 0.
 */
enum { RECEIVER_UNKNOWN, RECEIVER_TYPE, RECEIVER_SELF, RECEIVER_IVAR, RECEIVER_LOCAL };

static int call_receiver(struct source_cache *sc, const struct crystal_inline_site *site,
			 const char *base, size_t base_len, char *out, size_t outlen)
{
	const struct source_file *f;
	const char *s;
	char key[MAX_NAME], value[MAX_NAME];
	size_t len, n;
	bool free;

	if (!site->call_file || !site->call_line || !site->call_column ||
	    !ends_with(site->call_file, ".cr"))
		return RECEIVER_UNKNOWN;
	f = get_file(sc, site->call_file);
	s = f->data ? line_at(f, site->call_line, &len) : NULL;
	if (!s || site->call_column > len)
		return RECEIVER_UNKNOWN;
	s += site->call_column - 1;
	len -= site->call_column - 1;
	/* a method named by a word (not an operator: "-(1 << n)" is no call
	 * of - on self), or the `def initialize` a generated new calls */
	if ((ident_char(base[0]) && word_at(s, len, base, base_len)) ||
	    (len > 5 && !strncmp(s, "self.", 5) && word_at(s + 5, len - 5, base, base_len)) ||
	    (base_len == 10 && !strncmp(base, "initialize", 10) && len >= 4 &&
	     !strncmp(s, "def ", 4) && word_at(s + 4, len - 4, base, base_len)))
		return RECEIVER_SELF;
	/* @ivar.m, @ivar[...], @ivar op x (or a local variable's, a
	 * parameter's): the variable's name */
	if (len > 1 && ((s[0] == '@' && s[1] != '@') || (s[0] >= 'a' && s[0] <= 'z') ||
			s[0] == '_')) {
		size_t at = s[0] == '@';

		for (n = at; n < len && ident_char(s[n]) && s[n] != '?' && s[n] != '!'; n++)
			;
		if (n > at && n < outlen && (at || strncmp(s, "self", n)) &&
		    ((n + 1 < len && s[n] == '.' && word_at(s + n + 1, len - n - 1, base, base_len)) ||
		     (base[0] == '[' && s[n] == '[') ||
		     (!ident_char(base[0]) && base[0] != '[' && n + 1 + base_len < len &&
		      s[n] == ' ' && !strncmp(s + n + 1, base, base_len) &&
		      s[n + 1 + base_len] == ' '))) {
			memcpy(out, s + at, n - at);
			out[n - at] = 0;
			return at ? RECEIVER_IVAR : RECEIVER_LOCAL;
		}
	}
	/* [] of T, {} of K => V: Array(T).new, Hash(K, V).new */
	if (base_len == 3 && !strncmp(base, "new", 3) && len > 6 &&
	    (!strncmp(s, "[] of ", 6) || !strncmp(s, "{} of ", 6))) {
		bool hash = s[0] == '{';
		size_t k = written_type(s + 6, len - 6, &free), v = 0;
		bool vfree = false;
		int w;

		if (!k || free)
			return RECEIVER_UNKNOWN;
		if (!spell_type(s + 6, k, key, sizeof(key)))
			return RECEIVER_UNKNOWN;
		if (hash) {
			if (len < 6 + k + 4 || strncmp(s + 6 + k, " => ", 4))
				return RECEIVER_UNKNOWN;
			v = written_type(s + 6 + k + 4, len - 6 - k - 4, &vfree);
			if (!v || vfree || !spell_type(s + 10 + k, v, value, sizeof(value)))
				return RECEIVER_UNKNOWN;
			w = snprintf(out, outlen, "Hash(%s, %s)", key, value);
		} else {
			w = snprintf(out, outlen, "Array(%s)", key);
		}
		return w > 0 && (size_t)w < outlen ? RECEIVER_TYPE : RECEIVER_UNKNOWN;
	}
	n = type_literal(s, len, &free);
	if (!n || free || n + 1 + base_len > len || s[n] != '.' ||
	    !word_at(s + n + 1, len - n - 1, base, base_len))
		return RECEIVER_UNKNOWN;
	/* a lib's type is an alias of another (LibC::SizeT is UInt64) */
	if (!strncmp(s, "Lib", 3) || !spell_type(s, n, out, outlen))
		return RECEIVER_UNKNOWN;
	return RECEIVER_TYPE;
}

/* The receiver's type in a function's symbol ("*Foo(Int32)@Bar#baz<...>"
 * -> "Foo(Int32)"), 0 when it has none (a top-level function). */
static bool symbol_owner(const char *symbol, char *out, size_t outlen)
{
	int depth = 0;
	const char *p;

	if (!symbol || symbol[0] != '*')
		return false;
	for (p = ++symbol; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (!depth && (*p == '@' || *p == '#' || *p == '<' ||
				    (p[0] == ':' && p[1] == ':' && p[2] >= 'a' && p[2] <= 'z')))
			break;
	}
	if (!*p || *p == '<' || p == symbol || (size_t)(p - symbol) >= outlen)
		return false;
	memcpy(out, symbol, (size_t)(p - symbol));
	out[p - symbol] = 0;
	return out[0] >= 'A' && out[0] <= 'Z';
}

/* The last "::"-separated part of a type, without its parameters. */
static size_t base_of(const char *type, const char **start)
{
	const char *last = type;

	for (const char *p = type; *p && *p != '('; p++)
		if (p[0] == ':' && p[1] == ':')
			last = p + 2;
	*start = last;
	return strcspn(last, "(");
}

/* Whether two types have the same last name, parameters aside
 * ("JSON::Parser" and "Parser", "Array(T)" and "Array(Item)"). */
static bool same_base(const char *x, const char *y)
{
	const char *a, *b;
	size_t n = base_of(x, &a);

	return n == base_of(y, &b) && !strncmp(a, b, n);
}

/* The receiver of the instance methods of the declaring type (named in
 * full, parameters aside: "Array" for Array(T), or a module's "Indexable"
 * its includers define from) that an inlined body calls out of line, when
 * they agree on one: that body most likely runs on the same self. */
static bool owner_from_callees(const struct crystal_inline_site *site, const char *owner,
			       char *out, size_t outlen)
{
	size_t nb = strcspn(owner, "(");
	bool found = false;

	for (size_t i = 0; i < site->nr_callees; i++) {
		struct crystal_sym s;
		const char *by;
		size_t nc;

		if (!crystal_parse(site->callees[i], &s) || s.sep != '#' || !s.owner_len ||
		    s.owner_len >= outlen)
			continue;
		by = s.definer_len ? s.definer : s.owner;
		nc = s.definer_len ? s.definer_len : s.owner_len;
		if (nc < nb || strncmp(by, owner, nb) || (nc > nb && by[nb] != '('))
			continue;
		if (found && (strlen(out) != s.owner_len || strncmp(out, s.owner, s.owner_len)))
			return false;	/* two receivers: which one is self? */
		memcpy(out, s.owner, s.owner_len);
		out[s.owner_len] = 0;
		found = true;
	}
	return found;
}

/* The type instance variable @name is declared with in f ("@buffer :
 * Pointer(T)", "getter size : Int32", "def initialize(@io : IO)"), the
 * first found, as symbols spell it. */
static bool ivar_decl(const struct source_file *f, const char *name, char *out, size_t outlen)
{
	static const char *const before[] = { "@", "getter ", "getter! ", "getter? ",
					      "property ", "property! ", "property? " };
	size_t nlen = strlen(name);

	for (const char *p = f->data; p && (p = strstr(p, name)); p += nlen) {
		const char *t = p + nlen, *end = f->data + f->size, *eol;
		size_t n;
		bool free;

		if (t + 3 > end || strncmp(t, " : ", 3) || (p > f->data && ident_char(p[-1]) &&
							      p[-1] != '@'))
			continue;
		for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
			size_t k = strlen(before[i]);

			if ((size_t)(p - f->data) < k || strncmp(p - k, before[i], k) ||
			    (k > 1 && p - k > f->data && ident_char(p[-k - 1])))
				continue;
			t += 3;
			eol = memchr(t, '\n', (size_t)(end - t));
			n = written_type(t, (size_t)((eol ? eol : end) - t), &free);
			return n && spell_type(t, n, out, outlen);
		}
	}
	return false;
}

/* A type the prelude defines at the top level, whose name nothing
 * shadows in practice. */
static bool builtin_type(const char *s, size_t n)
{
	static const char *const names[] = {
		"Bool", "Char", "String", "Symbol", "Nil", "Void", "NoReturn", "Pointer", "Slice",
		"Array", "Hash", "Tuple", "NamedTuple", "Proc", "StaticArray", "Deque", "Set",
		"Int8", "Int16", "Int32", "Int64", "Int128", "UInt8", "UInt16", "UInt32", "UInt64",
		"UInt128", "Float32", "Float64", "Fiber", "Thread" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !strncmp(s, names[i], n))
			return true;
	return false;
}

/* The parameters of a generic type ("Hash(K, V)" -> K, V) or its
 * arguments ("Hash(String, Array(Int32))"), split at its top-level
 * commas; how many (at most max). */
static size_t type_args(const char *type, const char *arg[], size_t arg_len[], size_t max)
{
	const char *p = strchr(type, '(');
	size_t n = 0;
	int depth = 0;

	if (!p)
		return 0;
	for (const char *a = ++p; *p && n < max; p++) {
		if (*p == '(' || *p == '{')
			depth++;
		else if ((*p == ')' || *p == '}') && depth)
			depth--;
		else if ((*p == ',' || *p == ')') && !depth) {
			while (*a == ' ')
				a++;
			arg[n] = a;
			arg_len[n++] = (size_t)(p - a);
			if (*p == ')')
				break;
			a = p + 1;
		}
	}
	return n;
}

/* decl, written in the body of generic ("Pointer(T)" in Array(T)), for
 * the instance inst ("Array(String)"): "Pointer(String)". False when a
 * type variable is left or inst is not generic's. */
static bool substitute(const char *decl, const char *generic, const char *inst, char *out,
		       size_t outlen)
{
	const char *par[8], *arg[8];
	size_t par_len[8], arg_len[8], np, na, o = 0;

	np = type_args(generic, par, par_len, 8);
	na = type_args(inst, arg, arg_len, 8);
	if (np != na || strcspn(generic, "(") != strcspn(inst, "(") ||
	    strncmp(generic, inst, strcspn(generic, "(")))
		return false;
	for (const char *p = decl; *p;) {
		size_t n = 0, i;

		if (!ident_char(*p)) {
			if (o + 1 >= outlen)
				return false;
			out[o++] = *p++;
			continue;
		}
		while (ident_char(p[n]))
			n++;
		for (i = 0; i < np && (par_len[i] != n || strncmp(par[i], p, n)); i++)
			;
		if (i == np && n == 1 && *p >= 'A' && *p <= 'Z')
			return false;	/* a type variable of something else */
		/* a name written relative to the body's namespace (Entry for
		 * Hash::Entry) or an alias (Handle): which type, the binary
		 * does not say */
		if (i == np && p != decl && *p >= 'A' && *p <= 'Z' && p[-1] != ':' &&
		    p[n] != ':' && !builtin_type(p, n))
			return false;
		if (i < np) {
			if (o + arg_len[i] >= outlen || memchr(arg[i], '?', arg_len[i]))
				return false;
			memcpy(out + o, arg[i], arg_len[i]);
			o += arg_len[i];
		} else {
			if (o + n >= outlen)
				return false;
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = 0;
	return true;
}

/* The restriction of parameter name on the def line s ("def m(slice :
 * Bytes)" -> Slice(UInt8)), as symbols spell it. */
static bool param_decl(const char *s, size_t len, const char *name, char *out, size_t outlen)
{
	const char *def = s ? memmem(s, len, "def ", 4) : NULL, *end = s + len;
	size_t nlen = strlen(name);

	for (const char *p = def; p && p + nlen + 3 < end;
	     p = memmem(p + 1, (size_t)(end - p - 1), name, nlen)) {
		const char *t = p + nlen + 3;
		size_t n;
		bool free;

		if (p == def || strncmp(p, name, nlen) || strncmp(p + nlen, " : ", 3) ||
		    (p[-1] != '(' && p[-1] != ' ' && p[-1] != '*'))
			continue;
		n = written_type(t, (size_t)(end - t), &free);
		return n && spell_type(t, n, out, outlen);
	}
	return false;
}

/* The receiver of a call in the caller's body, an instance variable
 * (@name) or a parameter of the caller: the type it is declared with
 * there, the caller's type parameters filled in; only a generic instance
 * (a plain "io : IO" is only a bound on what runs). */
static bool variable_type(struct source_cache *sc, const struct crystal_inline_site *site,
			  const char *name, bool ivar, char *out, size_t outlen)
{
	const struct source_file *f = get_file(sc, site->call_file);
	char decl[MAX_NAME], generic[MAX_NAME], inst[MAX_NAME];
	const struct source_file *cf;
	const char *line;
	size_t len;

	if (!f->data)
		return false;
	if (ivar) {
		if (!ivar_decl(f, name, decl, sizeof(decl)))
			return false;
	} else {
		/* the caller's own def, holding the call */
		if (!site->caller_file || !site->caller_line || strcmp(site->caller_file,
								       site->call_file))
			return false;
		cf = get_file(sc, site->caller_file);
		line = line_at(cf, site->caller_line, &len);
		if (!param_decl(line, line ? len : 0, name, decl, sizeof(decl)))
			return false;
	}
	if (!strchr(decl, '('))
		return false;
	if (!symbol_owner(site->caller_symbol, inst, sizeof(inst)) || strchr(inst, '?') ||
	    !owner_of(f, site->call_line, generic, sizeof(generic), NULL))
		return false;
	/* a plain class: nothing to fill in, but a type variable is unknown */
	if (!strchr(generic, '('))
		return !strcmp(generic, inst) && substitute(decl, "", "", out, outlen);
	return substitute(decl, generic, inst, out, outlen);
}

/* `def Array.new(...)` at a file's top level: the type it reopens. */
static bool def_on_type(const char *s, size_t len, char *out, size_t outlen)
{
	const char *def = s ? memmem(s, len, "def ", 4) : NULL;
	size_t n;
	bool free;

	if (!def)
		return false;
	len -= (size_t)(def + 4 - s);
	s = def + 4;
	n = type_literal(s, len, &free);
	if (!n || n >= len || s[n] != '.' || n >= outlen)
		return false;
	memcpy(out, s, n);
	out[n] = 0;
	return true;
}

char *crystal_qualify(struct source_cache *sc, const struct crystal_inline_site *site)
{
	char owner[MAX_NAME], shown[MAX_NAME + 8], recv[MAX_NAME], reopened[MAX_NAME];
	char ivar[MAX_NAME];
	const char *name = site->name, *s = NULL, *def, *sep = "#", *b;
	const struct source_file *f;
	size_t len = 0, base_len = strcspn(name, ":");
	bool have_owner, on_type;
	int virt = VIRT_NONE;
	char *out;
	int r;

	if (!site->decl_file || !site->decl_line || !ends_with(site->decl_file, ".cr"))
		return NULL;
	/* a proc literal, by its place, as its symbol names it */
	if (!strcmp(name, "->"))
		return asprintf(&out, "~procProc@%s:%" PRIu32, site->decl_file,
				site->decl_line) < 0 ? NULL : out;
	/* a constant's initializer, a fun: already its symbol */
	if (name[0] == '~' || !strncmp(name, "__crystal", 9))
		return NULL;
	f = get_file(sc, site->decl_file);
	if (f->data)
		s = line_at(f, site->decl_line, &len);
	on_type = def_on_type(s, len, reopened, sizeof(reopened));
	have_owner = f->data && owner_of(f, site->decl_line, owner, sizeof(owner), &virt);
	if (!have_owner && on_type) {
		memcpy(owner, reopened, sizeof(owner));
		have_owner = true;
	}
	def = s ? memmem(s, len, "def ", 4) : NULL;
	/* class methods: `def self.x`, `def Type.x`, and a module extended for
	 * them (the ClassMethods idiom) */
	if (class_method_name(name, def != NULL) || on_type ||
	    (have_owner && ends_with(owner, "ClassMethods")) ||
	    (def && (size_t)(s + len - def) > 9 && !strncmp(def + 4, "self.", 5)))
		sep = "::";
	r = call_receiver(sc, site, name, base_len, recv, sizeof(recv));
	if (have_owner && !strcmp(sep, "#") &&
	    owner_from_callees(site, owner, shown, sizeof(shown))) {
		/* the receiver its body passes on */
	} else if (r == RECEIVER_TYPE) {
		/* written where it is called: the instantiation; a name relative
		 * to the caller's namespace ("Parser" for JSON::Parser) by the
		 * declaring type's */
		bool same = have_owner && same_base(recv, owner);

		if (same)
			base_of(owner, &b);	/* b: its last name, after its namespace */
		if (same && !strchr(recv, '(') && strchr(owner, '('))
			/* a generic type without its arguments (Slice.new(n, 0_u8)):
			 * the compiler infers them */
			unknown_params(owner, shown, sizeof(shown));
		else if (same && !strchr(recv, ':'))
			snprintf(shown, sizeof(shown), "%.*s%s", (int)(b - owner), owner, recv);
		else
			snprintf(shown, sizeof(shown), "%s", recv);
		sep = "::";	/* Type.method */
	} else if ((r == RECEIVER_IVAR || r == RECEIVER_LOCAL) && have_owner &&
		   variable_type(sc, site, recv, r == RECEIVER_IVAR, ivar, sizeof(ivar)) &&
		   (virt != VIRT_NONE || same_base(ivar, owner))) {
		/* an instance variable's or a parameter's declared type */
		snprintf(shown, sizeof(shown), "%s", ivar);
	} else if (r == RECEIVER_SELF && site->caller_file &&
		   !strcmp(site->caller_file, site->call_file) &&
		   symbol_owner(site->caller_symbol, recv, sizeof(recv))) {
		/* implicit self: the caller's receiver, whose method this is */
		snprintf(shown, sizeof(shown), "%s", recv);
	} else if (have_owner) {
		unknown_params(owner, shown, sizeof(shown));
		/* an instance method of a module or an abstract type runs on a
		 * type below it, which one the binary does not say: "IO+", as
		 * Crystal writes such a receiver */
		if (((virt != VIRT_NONE && !strcmp(sep, "#")) || virt == VIRT_TYPE) &&
		    strlen(shown) + 1 < sizeof(shown))
			strcat(shown, "+");
	} else {
		return NULL;
	}
	/* '*' as a function's symbol starts: the display rule drops a named
	 * argument expansion (":id:name") as it does for those */
	if (asprintf(&out, "*%s%s%s", shown, sep, name) < 0)
		return NULL;
	return out;
}

char *crystal_enclosing_def(struct source_cache *sc, const char *file, uint32_t line)
{
	const struct source_file *f;
	size_t len, threshold, ind, n;
	const char *s, *name, *sep = "#";
	char owner[MAX_NAME];

	if (!file || !line || !ends_with(file, ".cr"))
		return NULL;
	f = get_file(sc, file);
	s = f->data ? line_at(f, line, &len) : NULL;
	if (!s)
		return NULL;
	threshold = indent_of(s, len);
	for (uint32_t k = line; threshold > 0 && k-- > 1;) {
		s = line_at(f, k, &len);
		ind = indent_of(s, len);
		if (ind == len || s[ind] == '#' || ind >= threshold)
			continue;	/* blank, comment or deeper */
		threshold = ind;
		s += ind;
		len -= ind;
		skip_modifiers(&s, &len);
		if (type_decl(s, len, &name))
			return NULL;	/* in a type's body, not a method's */
		if (!starts_word(s, len, "def") || len < 5)
			continue;
		name = s + 4;
		len -= 4;
		if (len > 5 && !strncmp(name, "self.", 5)) {
			name += 5;
			len -= 5;
			sep = "::";
		}
		for (n = 0; n < len && name[n] != '(' && name[n] != ' ' && name[n] != ';' &&
			    name[n] != ':'; n++)
			;
		if (!n)
			return NULL;
		if (owner_of(f, k, owner, sizeof(owner), NULL))
			return xasprintf("%s%s%.*s", owner, sep, (int)n, name);
		return xasprintf("%.*s", (int)n, name);
	}
	return NULL;
}

void source_cache_free(struct source_cache *sc)
{
	for (size_t i = 0; i < sc->nr; i++) {
		free(sc->files[i].path);
		free(sc->files[i].data);
		free(sc->files[i].line_start);
	}
	free(sc->files);
	free(sc->base_dir);
	sc->files = NULL;
	sc->base_dir = NULL;
	sc->nr = sc->cap = 0;
}
