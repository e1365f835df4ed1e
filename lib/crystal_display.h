/* SPDX-License-Identifier: MIT */
/*
 * How every output of both programs shows a Crystal function: as Crystal's
 * own backtraces and API docs do, not as the symbol the compiler wrote.
 *
 *   *Array(String)@Array(T)#push<String>:Array(String)  ->  Array(String)#push
 *   *String::interpolation<String, Int32>:String         ->  String.interpolation
 *   *incoming_order<Int64, Random::PCG32>:String         ->  incoming_order
 *   ~procProc(Nil)@/usr/lib/crystal/lib/fiber.cr:98      ->  proc@fiber.cr:98
 *   ~CUSTOMERS:init                                      ->  CUSTOMERS:init
 *
 * The '*', the argument types, the return type and the "@DefiningType"
 * part go; the receiver's instantiation stays; a class method takes '.';
 * a union of many types in the receiver is cut after its first member
 * ("Array(JSON::Builder::ArrayState | …)"). Other names (C functions,
 * "[libgc.so+0x12]") are shown as they are.
 *
 * Two functions of one program that would show alike are told apart by a
 * crystal_namer: their argument types are added ("Foo#bar(Int32)"), then
 * the type defining the method ("Foo@Enumerable(T)#join(String)"), and
 * where even those agree, the whole symbol without its '*'.
 */
#ifndef ALYS_CRYSTAL_DISPLAY_H
#define ALYS_CRYSTAL_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>

enum crystal_detail {
	CRYSTAL_SHORT,		/* Array(String)#push */
	CRYSTAL_WITH_ARGS,	/* Array(String)#push(String) */
	CRYSTAL_WITH_DEFINER,	/* Array(String)@Array(T)#push(String), unions whole */
	CRYSTAL_SYMBOL,		/* the name as given, without a leading '*' */
};

/* The name shown for name at that detail, NUL-terminated in out (cut to
 * outlen - 1 bytes, at a character boundary). Returns its length. */
size_t crystal_display(const char *name, enum crystal_detail detail, char *out,
		       size_t outlen);

/* A type name of n bytes as shown: its unions cut as in function names
 * ("Array(JSON::Builder::ArrayState | …)"), a type private to a file by
 * its name alone. NUL-terminated in out as crystal_display does. */
size_t crystal_type_display(const char *type, size_t n, char *out, size_t outlen);

/* Where the proc literal a symbol names is written ("~procProc(Nil)@
 * /usr/lib/crystal/lib/fiber.cr:98", or the bare "/path/file.cr:N"):
 * the file (not NUL-terminated at file_len) and line. */
bool crystal_proc_place(const char *name, const char **file, size_t *file_len,
			unsigned long *line);

/* The display names of one program's symbols, told apart. */
struct crystal_namer;

struct crystal_namer *crystal_namer_new(void);
void crystal_namer_free(struct crystal_namer *n);

/* Every function symbol of the program, before the first display call. */
void crystal_namer_add(struct crystal_namer *n, const char *symbol);

/* name's display name (crystal_display's rule, with the detail that tells
 * it apart from the program's other symbols; n may be NULL). */
size_t crystal_namer_display(struct crystal_namer *n, const char *name, char *out,
			     size_t outlen);
/* The same, malloc'd (exits when out of memory, as the tables do). */
char *crystal_namer_dup(struct crystal_namer *n, const char *name);

#endif /* ALYS_CRYSTAL_DISPLAY_H */
