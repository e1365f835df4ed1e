// SPDX-License-Identifier: MIT
#include "lib/crystal_names.h"

#include "lib/crystal_display.h"

#include <string.h>

/* Operator methods, longest first where one is a prefix of another. */
static const char *const operators[] = {
	"<=>", "===", "&**", "[]?", "[]=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
	"=~", "!~", "[]", "&+", "&-", "&*", "+", "-", "*", "/", "%", "&", "|", "^", "~",
	"!", "<", ">",
};

static bool ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (unsigned char)c >= 0x80;
}

static bool ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

/* What may follow a method name: named arguments, arguments, return type. */
static bool ends_method(const char *p)
{
	return !*p || *p == ':' || *p == '<';
}

/* The end of the method name at p, or NULL. */
static const char *method_end(const char *p)
{
	if (ident_start(*p)) {
		while (ident_char(*p))
			p++;
		if (*p == '?' || *p == '!' || (*p == '=' && p[1] != '=' && p[1] != '~'))
			p++;
		while (*p == '\'')	/* a redefinition's previous_def */
			p++;
		return p;
	}
	for (size_t i = 0; i < sizeof(operators) / sizeof(operators[0]); i++) {
		size_t n = strlen(operators[i]);

		while (!strncmp(p, operators[i], n) && p[n] == '\'')
			n++;
		if (!strncmp(p, operators[i], n) && ends_method(p + n))
			return p + n;
	}
	return NULL;
}

/* ":seconds:nanoseconds" before the arguments of a method called with
 * named arguments; a return type ("struct.LibC::Timeval") is not one. */
static const char *named_end(const char *p)
{
	for (;;) {
		const char *q = p + 1;

		if (p[0] != ':' || !ident_start(q[0]) || (q[0] >= 'A' && q[0] <= 'Z'))
			return p;
		while (ident_char(*q))
			q++;
		if (*q != '<' && !(q[0] == ':' && q[1] != ':'))
			return p;
		p = q;
	}
}

bool crystal_parse(const char *name, struct crystal_sym *s)
{
	const char *b = name[0] == '*' ? name + 1 : name;
	const char *p, *sep = NULL, *at = NULL, *m;
	int depth = 0;

	memset(s, 0, sizeof(*s));
	if (!*b || *b == '~')
		return false;
	for (p = b; *p; p++) {
		if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			depth--;
		} else if (depth) {
			continue;
		} else if (*p == '@') {
			if (!at)
				at = p;	/* "Type@Generic": the first '@' ends the type */
		} else if (*p == '#') {
			sep = p;
			break;
		} else if (p[0] == ':' && p[1] == ':') {
			/* a type's name is capitalized, a method's is not */
			if (!(p[2] >= 'A' && p[2] <= 'Z')) {
				sep = p;
				break;
			}
			p++;
		} else if (*p == ':' || *p == '<') {
			break;	/* a top-level method's return type or arguments */
		}
	}
	if (sep) {
		s->owner = b;
		s->owner_len = (size_t)((at && at < sep ? at : sep) - b);
		if (at && at < sep) {
			s->definer = at + 1;
			s->definer_len = (size_t)(sep - at - 1);
		}
		s->sep = *sep == '#' ? '#' : '.';
		m = sep + (*sep == '#' ? 1 : 2);
		if (!s->owner_len)
			return false;
	} else {
		m = b;
	}
	s->method = m;
	p = method_end(m);
	if (!p || p == m)
		return false;
	s->method_len = (size_t)(p - m);
	s->named = p;
	p = named_end(p);
	s->named_len = (size_t)(p - s->named);
	if (*p == '<') {
		s->args = ++p;
		for (depth = 0; *p && (depth || *p != '>'); p++)
			depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
		if (!*p)
			return false;
		s->args_len = (size_t)(p - s->args);
		p++;
	}
	if (*p == ':') {
		s->ret = p + 1;
		s->ret_len = strlen(s->ret);
	} else if (*p) {
		return false;
	}
	/* A generic's class method is named after the generic, Range(B, E)::new;
	 * the type it makes is the instance: Range(Int32, Nil). */
	if (s->sep == '.' && s->ret_len > s->owner_len && !s->definer_len) {
		const char *paren = memchr(s->owner, '(', s->owner_len);
		size_t base = paren ? (size_t)(paren - s->owner) + 1 : 0;

		if (base && !strncmp(s->ret, s->owner, base) &&
		    s->ret[s->ret_len - 1] == ')' && strcspn(s->ret, "|") == s->ret_len &&
		    (s->method_len == 3 && !memcmp(s->method, "new", 3))) {
			s->owner = s->ret;
			s->owner_len = s->ret_len;
		}
	}
	/* a Crystal method: a symbol, or an owner that is a type */
	return name[0] == '*' || (sep && b[0] >= 'A' && b[0] <= 'Z');
}

/* Owner and method of a method name, as the site rule reads them: parsed
 * once a frame, for each of the rule's questions. */
struct method_name {
	bool ok;		/* a method name: owner (the instantiated type, before
				 * '@' if any), separator, method */
	struct crystal_sym s;
};

static void split_method(const char *name, struct method_name *m)
{
	m->ok = crystal_parse(name, &m->s) && m->s.sep;
}

static bool method_is(const struct method_name *m, const char *want)
{
	return m->s.method_len == strlen(want) && !memcmp(m->s.method, want, m->s.method_len);
}

/* out = type s[0..n) as every output shows it (crystal_type_display),
 * then suffix; false, out untouched, when that does not fit in cap. */
static bool put_type(char *out, size_t cap, const char *s, size_t n, const char *suffix)
{
	size_t len = crystal_type_display(s, n, NULL, 0);

	if (len + strlen(suffix) >= cap)
		return false;
	crystal_type_display(s, n, out, cap);
	strcpy(out + len, suffix);
	return true;
}

static bool constructed_type(const struct method_name *m, char *out, size_t outlen)
{
	if (!m->ok || (!method_is(m, "new") && !method_is(m, "initialize") &&
		       !method_is(m, "allocate")))
		return false;
	return put_type(out, outlen, m->s.owner, m->s.owner_len, "");
}

bool crystal_constructed_type(const char *name, char *out, size_t outlen)
{
	struct method_name m;

	split_method(name, &m);
	return constructed_type(&m, out, outlen);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool allocator_frame(const char *name, const struct method_name *m)
{
	static const char *const exact[] = {
		"malloc", "malloc_atomic", "realloc", "free", "calloc", "[stack lost]",
	};

	if (has_prefix(name, "GC_") || has_prefix(name, "GC::") || has_prefix(name, "*GC::") ||
	    has_prefix(name, "__crystal_malloc") || has_prefix(name, "__crystal_realloc") ||
	    has_prefix(name, "[libgc"))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	/* Pointer(T).malloc, Pointer(T)#realloc, GC.malloc_atomic, ... */
	return m->ok && (method_is(m, "malloc") || method_is(m, "malloc_atomic") ||
			 method_is(m, "realloc"));
}

bool is_allocator_frame(const char *name)
{
	struct method_name m;

	split_method(name, &m);
	return allocator_frame(name, &m);
}

bool is_bare_constructor(const char *name)
{
	return !strcmp(name, "new") || !strcmp(name, "initialize") || !strcmp(name, "allocate");
}

/* Pointer(X).malloc or Pointer(X)#realloc: X's buffer, type Pointer(X). */
static void note_buffer(struct site_rule *r, const struct method_name *m)
{
	if (r->buffer[0] || !m->ok || strncmp(m->s.owner, "Pointer(", 8) ||
	    (!method_is(m, "malloc") && !method_is(m, "realloc")))
		return;
	r->pointer_buffer = put_type(r->buffer, sizeof(r->buffer), m->s.owner, m->s.owner_len, "");
}

bool crystal_buffer_name(const char *owner, size_t n, char *out, size_t cap)
{
	return put_type(out, cap, owner, n, " buffer");
}

/* A Pointer(X) buffer reaches its owner: "Owner buffer". */
static void own_buffer(struct site_rule *r, const char *owner, size_t n)
{
	if (r->pointer_buffer && crystal_buffer_name(owner, n, r->buffer, sizeof(r->buffer)))
		r->pointer_buffer = false;
}

/*
 * A block the site allocates itself, with no constructor or Pointer frame
 * between (GC.malloc_atomic in String#byte_slice?, GC.realloc in
 * String::Builder#resize_to_capacity), is named by the site's owner: a
 * String's bytes in String and String::Builder methods (a builder's buffer
 * becomes the String), an Owner from a class method new..., else
 * "Owner buffer".
 */
static void note_owner(struct site_rule *r, const struct method_name *m)
{
	const struct crystal_sym *s = &m->s;
	size_t n;

	if (r->type[0] || !m->ok)
		return;
	if (r->buffer[0]) {
		own_buffer(r, s->owner, s->owner_len);
		return;
	}
	n = s->owner_len;
	if ((n == 6 && !memcmp(s->owner, "String", 6)) ||
	    (n == 15 && !memcmp(s->owner, "String::Builder", 15))) {
		strcpy(r->type, "String");
		return;
	}
	/* a constructor by another name (JSON::Serializable's
	 * Foo.new_from_json_pull_parser): its allocate was inlined */
	if (s->sep == '.' && s->method_len >= 3 && !memcmp(s->method, "new", 3)) {
		put_type(r->type, sizeof(r->type), s->owner, n, "");
		return;
	}
	crystal_buffer_name(s->owner, n, r->buffer, sizeof(r->buffer));
}

bool site_rule_is_site(struct site_rule *r, const char *name)
{
	char other[SITE_TYPE_MAX];
	struct method_name m;

	split_method(name, &m);
	if (allocator_frame(name, &m)) {
		note_buffer(r, &m);
		return false;
	}
	if (is_bare_constructor(name))
		return false;
	if (constructed_type(&m, other, sizeof(other))) {
		if (!r->type[0]) {
			memcpy(r->type, other, strlen(other) + 1);
			own_buffer(r, other, strlen(other));
			return false;
		}
		if (!strcmp(r->type, other))
			return false;
	}
	note_owner(r, &m);
	return true;
}
