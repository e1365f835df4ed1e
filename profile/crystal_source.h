/* SPDX-License-Identifier: MIT */
/*
 * Full names for inlined Crystal methods, from their source.
 *
 * Crystal's DWARF names a method by its bare name: an inlined Point.new is
 * just "new", with no class or namespace DIE around it and no type
 * information in --release builds. The symbol table has the full names, but
 * an inlined method has no symbol. Its declaration file and line are known,
 * so when that source file is readable here, the enclosing
 * class/struct/module lines above the declaration (by indentation) give the
 * owner: "new" declared by `def initialize` inside `class Point` becomes
 * "Point::new", as the symbol of a non-inlined copy would begin.
 */
#ifndef ALYS_CONV_CRYSTAL_SOURCE_H
#define ALYS_CONV_CRYSTAL_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct source_file;

struct source_cache {
	struct source_file *files;
	size_t nr, cap;
	/* where a relative source path is also looked for: the program was
	 * built where its sources are (crystal writes the paths it was given,
	 * DW_AT_comp_dir "."), so this directory and its parents */
	char *base_dir;
};

/* Relative paths are also looked up under dir and its parents (the traced
 * executable's directory), after the current directory. */
void source_cache_set_base(struct source_cache *sc, const char *dir);

/* An inlined call, as DWARF tells it (inline_index.h), and the symbol of
 * the frame it was inlined into, as the symbolizer named it. */
struct crystal_inline_site {
	const char *name;		/* the method: "new", "push", "new:id:name" */
	const char *decl_file;
	uint32_t decl_line;
	const char *call_file;
	uint32_t call_line, call_column;
	const char *caller_symbol;	/* "*Foo@Bar#baz<...>", or NULL */
	const char *caller_file;	/* where the caller is defined, or NULL */
	/* the symbols of the functions its own code calls or jumps to out of
	 * line (not its inlined callees'), "*Array(Item)@Array(T)#check_..." */
	const char *const *callees;
	size_t nr_callees;
	uint32_t caller_line;		/* the caller's def's line, or 0 */
};

/*
 * An inlined function's symbol, as the compiler would have written it
 * without the argument and return types ("*Array(Item)::new",
 * "*Item#label"): Crystal's DWARF names only the method. Its owner, first
 * found wins:
 *   - an instance method of the same type that its body calls out of
 *     line ("Array(T)#push" calls "*Array(Item)@Array(T)#check_needs_resize"):
 *     one receiver among them, its receiver;
 *   - a type written where it is called ("Array(Item).new", "[] of Item",
 *     "{} of String => Int32"; a name relative to the declaring type's
 *     namespace, "Parser", completed by it), spelled as symbols spell it
 *     ("Void*" is "Pointer(Void)"), a class method;
 *   - called without a receiver (implicit self, or the `def initialize` a
 *     generated `new` calls) from the caller's own file: the caller's
 *     receiver (a block the compiler inlined, as String.build's, has no
 *     frame of its own: its code is in another file);
 *   - the type whose body declares it, its parameters unknown
 *     ("*Hash(?, ?)::new"), or the type a top-level `def Array.new`
 *     reopens; a module's, an abstract type's or a root's instance method
 *     runs on a type below it: "*IO+#<<", "*Exception+#initialize" (and
 *     a class method of the latter two: "*Int+::from_io").
 * Class methods (new, new_*, allocate, def self., def Type.) take "::",
 * others "#"; a named-argument expansion is kept ("*Item::new:id:name",
 * which the display rule drops). A proc literal ("->") is named by its
 * place as its symbol would be. NULL when the file is not Crystal, cannot
 * be read, or the method is at top level. The result is malloc'd.
 */
char *crystal_qualify(struct source_cache *sc, const struct crystal_inline_site *site);

/*
 * The method whose body holds line of file, as a symbol names it:
 * "Owner#name", "Owner::name" (def self.name), or "name" at top level;
 * NULL when the file cannot be read or no def encloses the line. It names
 * a proc literal after the method it is written in. malloc'd.
 */
char *crystal_enclosing_def(struct source_cache *sc, const char *file, uint32_t line);

void source_cache_free(struct source_cache *sc);

#endif /* ALYS_CONV_CRYSTAL_SOURCE_H */
