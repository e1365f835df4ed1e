// SPDX-License-Identifier: MIT
#include "crystal_names.h"

#include <string.h>

struct method_name {
	const char *type;	/* instantiated type (before '@' if any) */
	size_t type_len;
	const char *method;
	size_t method_len;
};

/*
 * Split "Owner::method<...>:Ret" at the last "::" or "#" that comes before
 * the argument list or the return type, outside parentheses.
 */
static bool split_method(const char *name, struct method_name *m)
{
	const char *s = name[0] == '*' ? name + 1 : name;
	const char *sep = NULL, *at = NULL, *p, *end;
	size_t sep_len = 0;
	int depth = 0;

	for (p = s; *p; p++) {
		if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			depth--;
		} else if (depth) {
			continue;
		} else if (*p == '@') {
			if (!at)
				at = p;	/* "Type@Generic": the first '@' ends the type */
		} else if (p[0] == ':' && p[1] == ':') {
			sep = p;
			sep_len = 2;
			p++;
		} else if (*p == '#') {
			sep = p;
			sep_len = 1;
		} else if (*p == ':' || (*p == '<' && sep && p > sep + sep_len)) {
			break;	/* return type, or argument types after a method name */
		}
	}
	if (!sep || sep == s)
		return false;
	end = p;
	if (at && at > sep)
		at = NULL;
	m->type = s;
	m->type_len = (size_t)((at ? at : sep) - s);
	m->method = sep + sep_len;
	m->method_len = (size_t)(end - m->method);
	/* an operator method such as "<<" runs into its argument list: cut it */
	if (m->method_len && m->method[0] != '<') {
		const char *lt = memchr(m->method, '<', m->method_len);

		if (lt)
			m->method_len = (size_t)(lt - m->method);
	}
	return m->type_len > 0;
}

static bool method_is(const struct method_name *m, const char *want)
{
	return m->method_len == strlen(want) && !memcmp(m->method, want, m->method_len);
}

bool crystal_constructed_type(const char *name, char *out, size_t outlen)
{
	struct method_name m;

	if (!split_method(name, &m))
		return false;
	if (!method_is(&m, "new") && !method_is(&m, "initialize") &&
	    !method_is(&m, "allocate"))
		return false;
	if (m.type_len >= outlen)
		return false;
	memcpy(out, m.type, m.type_len);
	out[m.type_len] = '\0';
	return true;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool is_allocator_frame(const char *name)
{
	static const char *const exact[] = {
		"malloc", "malloc_atomic", "realloc", "free", "calloc", "[stack lost]",
	};
	struct method_name m;

	if (has_prefix(name, "GC_") || has_prefix(name, "GC::") || has_prefix(name, "*GC::") ||
	    has_prefix(name, "__crystal_malloc") || has_prefix(name, "__crystal_realloc") ||
	    has_prefix(name, "[libgc"))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	if (!split_method(name, &m))
		return false;
	/* Pointer(T).malloc, Pointer(T)#realloc, GC.malloc_atomic, ... */
	return method_is(&m, "malloc") || method_is(&m, "malloc_atomic") ||
	       method_is(&m, "realloc");
}

bool is_bare_constructor(const char *name)
{
	return !strcmp(name, "new") || !strcmp(name, "initialize") || !strcmp(name, "allocate");
}

/* Pointer(X).malloc or Pointer(X)#realloc: X's buffer, type Pointer(X). */
static void note_buffer(struct site_rule *r, const char *name)
{
	struct method_name m;

	if (r->buffer[0] || !split_method(name, &m) || m.type_len >= sizeof(r->buffer) ||
	    strncmp(m.type, "Pointer(", 8) || (!method_is(&m, "malloc") && !method_is(&m, "realloc")))
		return;
	memcpy(r->buffer, m.type, m.type_len);
	r->buffer[m.type_len] = '\0';
}

bool site_rule_is_site(struct site_rule *r, const char *name)
{
	char other[SITE_TYPE_MAX];

	if (is_allocator_frame(name)) {
		note_buffer(r, name);
		return false;
	}
	if (is_bare_constructor(name))
		return false;
	if (crystal_constructed_type(name, other, sizeof(other))) {
		if (!r->type[0]) {
			memcpy(r->type, other, strlen(other) + 1);
			return false;
		}
		if (!strcmp(r->type, other))
			return false;
	}
	return true;
}
