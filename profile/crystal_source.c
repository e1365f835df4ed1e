// SPDX-License-Identifier: MIT
#include "crystal_source.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

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

/* Enclosing types of line n, outermost first, joined by "::" into out. */
static bool owner_of(const struct source_file *f, uint32_t n, char *out, size_t outlen)
{
	const char *parts[16];
	size_t part_len[16], nparts = 0, len, threshold, pos = 0;
	const char *s = line_at(f, n, &len);

	if (!s)
		return false;
	threshold = indent_of(s, len);
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

char *crystal_qualify(struct source_cache *sc, const char *name,
		      const char *decl_file, uint32_t decl_line)
{
	char owner[MAX_NAME];
	const struct source_file *f;
	const char *s, *def, *sep = "#";
	size_t len;
	char *out;

	if (!decl_file || !decl_line || !ends_with(decl_file, ".cr"))
		return NULL;
	f = get_file(sc, decl_file);
	if (!f->data || !owner_of(f, decl_line, owner, sizeof(owner)))
		return NULL;
	s = line_at(f, decl_line, &len);
	def = s ? memmem(s, len, "def ", 4) : NULL;
	/* `new` is generated from `def initialize`; `def self.x` is a class method */
	if (!strcmp(name, "new") || (def && (size_t)(s + len - def) > 9 &&
					 !strncmp(def + 4, "self.", 5)))
		sep = "::";
	if (asprintf(&out, "%s%s%s", owner, sep, name) < 0)
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
		if (owner_of(f, k, owner, sizeof(owner)))
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
