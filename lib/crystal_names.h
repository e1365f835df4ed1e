/* SPDX-License-Identifier: MIT */
/*
 * Reading Crystal symbol names, which the converter keeps as the compiler
 * wrote them:
 *   *Point::new<Int32>:Point
 *   *Hash(String, Int32)@Hash(K, V)::new:Hash(String, Int32)
 *   *Array(Point)@Array(T)#initialize<Int32>:Nil
 *   Point::new                       (an inlined frame, see crystal_source.h)
 * A leading '*' marks a method; "Type@Generic" names the instantiated type
 * and the generic one that defines the method; then "::" (class method) or
 * "#" (instance method), the method name, "<argument types>" and
 * ":return type".
 */
#ifndef ALYS_CRYSTAL_NAMES_H
#define ALYS_CRYSTAL_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The parts of a Crystal method's name. Symbols begin with '*'; inlined
 * frames named from source have no '*' and no types ("Point::new").
 * Lengths are 0 for parts absent; owner is "" for a top-level method.
 */
struct crystal_sym {
	const char *owner;	/* "Array(String)": the instantiated type */
	size_t owner_len;
	const char *definer;	/* "Array(T)", after '@': the type defining it */
	size_t definer_len;
	char sep;		/* '#' instance method, '.' class method, 0 top level */
	const char *method;	/* "push", "<<", "[]?", "status=" */
	size_t method_len;
	const char *named;	/* ":seconds:nanoseconds": named arguments */
	size_t named_len;
	const char *args;	/* "Int32, String", inside <...>; NULL if none */
	size_t args_len;
	const char *ret;	/* "Array(String)", after ':' */
	size_t ret_len;
};

/* False when name is not a Crystal method (C functions, "~proc...",
 * constants' initializers, bare "new"). */
bool crystal_parse(const char *name, struct crystal_sym *s);

/*
 * If name is a constructor frame (T::new, T#initialize, T::allocate), copy
 * the type T (the instantiated one: "Hash(String, Int32)") into out and
 * return true.
 */
bool crystal_constructed_type(const char *name, char *out, size_t outlen);

/*
 * Frames that belong to the allocator rather than to the program: the GC
 * functions, Crystal's malloc wrappers and GC module, Pointer.malloc and
 * realloc. Constructors are not among them (see site_rule_is_site()).
 */
bool is_allocator_frame(const char *name);

/* "new", "initialize" or "allocate" alone: an inlined constructor whose
 * owner is unknown (its source file was not readable here). */
bool is_bare_constructor(const char *name);

/*
 * The rule that names an allocation site, shared by every output of both
 * programs: fed a stack's frame names innermost first (inlined frames as
 * frames), it says which one is the site, the first frame that is neither
 * the allocator's nor a constructor of the type being built. The type is
 * that of the innermost constructor with only allocator frames below it.
 */
#define SITE_TYPE_MAX 1024
struct site_rule {
	char type[SITE_TYPE_MAX];	/* "" until a constructor is seen; "String"
					 * for bytes String's methods allocate */
	/* A block that is not an object: "Owner buffer" for the owner of
	 * the constructor or method that allocates it, itself or through
	 * Pointer(X).malloc or Pointer(X)#realloc ("Array(Leaf) buffer");
	 * "Pointer(X)" when no Crystal type owns the Pointer call; "" for
	 * an object. */
	char buffer[SITE_TYPE_MAX];
	bool pointer_buffer;	/* buffer is still "Pointer(X)" */
};

static inline void site_rule_init(struct site_rule *r)
{
	r->type[0] = '\0';
	r->buffer[0] = '\0';
	r->pointer_buffer = false;
}

/* "Owner buffer": how every output names a block that is not an object,
 * by the type owning it (owner[0..n), shown as crystal_type_display
 * shows it), into out; false when that does not fit in cap. */
bool crystal_buffer_name(const char *owner, size_t n, char *out, size_t cap);

/* True when name, the next frame outwards, is the site. */
bool site_rule_is_site(struct site_rule *r, const char *name);

#endif /* ALYS_CRYSTAL_NAMES_H */
