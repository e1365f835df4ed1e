// SPDX-License-Identifier: MIT
/*
 * Unit test of lib/crystal_names.c: the one rule, shared by alys-bpf's
 * --interval report and every converter output, for which frames are the
 * allocator's (left out when naming a site, trimmed from pprof's leaf) and
 * which name the type a constructor makes. Names as the binaries spell them:
 * debug builds (mangled symbols), --release builds (inlined frames from
 * DWARF), C, libgc without symbols.
 * Prints one line per check and "N passed, M failed" last.
 */
#include <stdio.h>
#include <string.h>

#include "crystal_names.h"

static int passed, failed;

static void check(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	if (ok)
		passed++;
	else
		failed++;
}

static const struct {
	const char *name;
	int allocator;
} frames[] = {
	/* the collector, Crystal's wrappers and GC module */
	{ "GC_malloc", 1 }, { "GC_malloc_atomic", 1 }, { "GC_realloc", 1 },
	{ "GC_malloc_kind_global", 1 }, { "__crystal_malloc64", 1 },
	{ "__crystal_malloc_atomic64", 1 }, { "__crystal_realloc64", 1 },
	{ "*GC::malloc<UInt64>:Pointer(Void)", 1 }, { "*GC::malloc_atomic<UInt64>:Pointer(Void)", 1 },
	{ "*GC::realloc<Pointer(Void), UInt64>:Pointer(Void)", 1 },
	{ "GC::malloc", 1 }, { "GC::realloc", 1 },
	/* Pointer.malloc and Pointer#realloc, debug and inlined */
	{ "*Pointer(Int32)@Pointer(T)::malloc<Int32>:Pointer(Int32)", 1 },
	{ "*Pointer(UInt8)@Pointer(T)#realloc<Int32>:Pointer(UInt8)", 1 },
	{ "Pointer(T)::malloc", 1 }, { "Pointer(T)#realloc", 1 },
	/* C, and libgc without symbols */
	{ "malloc", 1 }, { "realloc", 1 }, { "[libgc.so.1.5.1+0x1a2b0]", 1 },
	/* the program: never the allocator */
	{ "*Point::new<Int32>:Point", 0 }, { "Leaf::new", 0 },
	{ "*Array(Int32)@Array(T)#initialize<Int32, Int32>:Pointer(Int32)", 0 },
	{ "*Array(String)@Array(T)#resize_to_capacity<Int32>:Pointer(String)", 0 },
	{ "*make_points<Int32>:Array(Point)", 0 }, { "__crystal_main", 0 },
	{ "main", 0 }, { "[anon]", 0 }, { "[truncated]", 0 }, { "chain_c", 0 },
	{ "*Hash(String, Int32)@Hash(K, V)#malloc_entries<Int32>:Pointer(Hash::Entry(String, Int32))", 0 },
	{ "*Foo::gcd<Int32>:Int32", 0 }, { "GCD::compute", 0 },
};

static const struct {
	const char *name;
	const char *type;	/* NULL: not a constructor */
} ctors[] = {
	{ "*Point::new<Int32>:Point", "Point" },
	{ "*Hash(String, Int32)@Hash(K, V)::new:Hash(String, Int32)", "Hash(String, Int32)" },
	{ "*Array(Point)@Array(T)#initialize<Int32>:Nil", "Array(Point)" },
	{ "Leaf::new", "Leaf" },
	{ "*Foo::allocate:Foo", "Foo" },
	{ "*Foo::newer<Int32>:Foo", NULL },
	{ "*Foo#renew:Nil", NULL },
	{ "new", NULL },
	{ "GC_malloc", NULL },
};

/* Stacks, innermost first, NULL-terminated: the site and the type. */
static const struct {
	const char *frames[8];
	const char *site;	/* NULL: only allocator frames */
	const char *type;
	const char *buffer;	/* Pointer(X) of a Pointer.malloc/realloc */
} stacks[] = {
	{ { "GC_malloc_atomic", "*GC::malloc_atomic<UInt64>:Pointer(Void)", "__crystal_malloc_atomic64",
	    "*Point::new<Int32>:Point", "*make_points<Int32>:Array(Point)", "__crystal_main", NULL },
	  "*make_points<Int32>:Array(Point)", "Point" },
	/* --release: the constructor and the wrappers inlined into the caller */
	{ { "GC_malloc_atomic", "GC::malloc_atomic", "Leaf::new", "*chain_c<Int32>:Int64", NULL },
	  "*chain_c<Int32>:Int64", "Leaf" },
	/* a constructor calling the constructor of its superclass/itself */
	{ { "GC_malloc", "*Foo::new<Int32>:Foo", "*Foo#initialize<Int32>:Nil", "new", "run", NULL },
	  "run", "Foo" },
	/* a buffer grown by Array#push: no type, the site is the growing method */
	{ { "GC_realloc", "*GC::realloc<Pointer(Void), UInt64>:Pointer(Void)",
	    "*Pointer(UInt8)@Pointer(T)#realloc<Int32>:Pointer(UInt8)",
	    "*Array(Int32)@Array(T)#resize_to_capacity<Int32>:Pointer(Int32)", "*grow<Int32>:Nil", NULL },
	  "*Array(Int32)@Array(T)#resize_to_capacity<Int32>:Pointer(Int32)", "", "Pointer(UInt8)" },
	/* an array's elements: the constructor names the type, the buffer is noted */
	{ { "GC_malloc", "__crystal_malloc64", "*Pointer(Point)@Pointer(T)::malloc<Int32>:Pointer(Point)",
	    "*Array(Point)@Array(T)#initialize<Int32>:Nil", "*Array(Point)@Array(T)::new<Int32>:Array(Point)",
	    "main", NULL },
	  "main", "Array(Point)", "Pointer(Point)" },
	/* GC.realloc of a String::Builder: no Pointer frame, no buffer type */
	{ { "GC_realloc", "*GC::realloc<Pointer(Void), UInt64>:Pointer(Void)",
	    "*String::Builder#resize_to_capacity<Int32>:Pointer(UInt8)", "main", NULL },
	  "*String::Builder#resize_to_capacity<Int32>:Pointer(UInt8)", "", "" },
	/* an object built inside another type's constructor: that one is the site */
	{ { "GC_malloc", "*Bar::new:Bar", "*Foo#initialize:Nil", "*Foo::new:Foo", "main", NULL },
	  "*Foo#initialize:Nil", "Bar" },
	{ { "GC_malloc", "__crystal_malloc64", NULL }, NULL, "" },
};

int main(void)
{
	char what[512], type[128];

	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		snprintf(what, sizeof(what), "%s is %sthe allocator's", frames[i].name,
			 frames[i].allocator ? "" : "not ");
		check(what, is_allocator_frame(frames[i].name) == frames[i].allocator);
	}
	for (size_t i = 0; i < sizeof(ctors) / sizeof(ctors[0]); i++) {
		bool is = crystal_constructed_type(ctors[i].name, type, sizeof(type));

		snprintf(what, sizeof(what), "%s constructs %s", ctors[i].name,
			 ctors[i].type ? ctors[i].type : "nothing");
		check(what, ctors[i].type ? is && !strcmp(type, ctors[i].type) : !is);
	}
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct site_rule r;
		const char *site = NULL;

		site_rule_init(&r);
		for (const char *const *f = stacks[i].frames; *f && !site; f++)
			if (site_rule_is_site(&r, *f))
				site = *f;
		snprintf(what, sizeof(what), "stack %zu: site %s, type '%s', buffer '%s'", i + 1,
			 stacks[i].site ? stacks[i].site : "(none)", stacks[i].type,
			 stacks[i].buffer ? stacks[i].buffer : "");
		check(what, (site && stacks[i].site ? !strcmp(site, stacks[i].site) : site == stacks[i].site) &&
		      !strcmp(r.type, stacks[i].type) &&
		      !strcmp(r.buffer, stacks[i].buffer ? stacks[i].buffer : ""));
	}
	check("a type name too long for the buffer is refused",
	      !crystal_constructed_type("*Point::new<Int32>:Point", type, 5));
	check("bare new/initialize/allocate (inlined, no type) are bare constructors",
	      is_bare_constructor("new") && is_bare_constructor("initialize") &&
	      is_bare_constructor("allocate") && !is_bare_constructor("Point::new"));
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
