// SPDX-License-Identifier: MIT
/*
 * Inlined frames of --release binaries, named as their physical copies are
 * (profile/crystal_source.c crystal_qualify, then the display rule). Each
 * case is a DW_TAG_inlined_subroutine read from a real binary: Debian's
 * Crystal 1.6 building fixtures/inline_names.cr and
 * bench/workloads/http_json.cr with --release (DWARF names the method
 * alone, its declaration, the call's file, line and column); the expected
 * name is what the symbol of the same instantiation shows, or "?" for the
 * type parameters the binary does not hold. The standard library's source
 * is Debian's (/usr/lib/crystal/lib, the package's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crystal_display.h"
#include "profile/crystal_source.h"
#include "unit_check.h"

#define STD "/usr/lib/crystal/lib/"
#define FIX "tests/unit/fixtures/inline_names.cr"

struct inline_case {
	const char *what;
	struct crystal_inline_site site;
	const char *want;	/* displayed; NULL: qualify gives nothing */
};

static const struct inline_case cases[] = {
	{ "a type written at the call: Array(Item).new",
	  { "new", STD "array.cr", 94, FIX, 32, 11, "*run<Int32>:Nil", FIX }, "Array(Item).new" },
	{ "the initialize a generated new calls: the new's owner",
	  { "initialize", STD "array.cr", 94, STD "array.cr", 94, 3, "*Array(Item)::new",
	    STD "array.cr" }, "Array(Item)#initialize" },
	{ "Array(String).new", { "new", STD "array.cr", 94, FIX, 33, 13, "*run<Int32>:Nil", FIX },
	  "Array(String).new" },
	{ "Hash(String, Int32).new",
	  { "new", STD "hash.cr", 197, FIX, 34, 12, "*run<Int32>:Nil", FIX },
	  "Hash(String, Int32).new" },
	{ "Hash's initialize", { "initialize", STD "hash.cr", 197, STD "hash.cr", 197, 3,
				 "*Hash(String, Int32)::new", STD "hash.cr" },
	  "Hash(String, Int32)#initialize" },
	{ "[] of Point: Array(Point).new",
	  { "new", STD "array.cr", 94, FIX, 35, 12, "*run<Int32>:Nil", FIX }, "Array(Point).new" },
	{ "an array literal: the instantiation unknown, a class method",
	  { "unsafe_build", STD "array.cr", 192, FIX, 37, 78, "*run<Int32>:Nil", FIX },
	  "Array(?).unsafe_build" },
	{ "Array(T).new in the standard library: T is not a type",
	  { "new", STD "array.cr", 112, STD "array.cr", 193, 11, "*Array(?)::unsafe_build",
	    STD "array.cr" }, "Array(?).new" },
	{ "named arguments: Item.new, the expansion dropped",
	  { "new:id:name:email:tags", FIX, 10, FIX, 37, 10, "*run<Int32>:Nil", FIX }, "Item.new" },
	{ "... its initialize", { "initialize", FIX, 10, FIX, 10, 3,
				  "*Item::new:id:name:email:tags", FIX }, "Item#initialize" },
	{ "items << it: a local's type is not in the binary",
	  { "<<", STD "array.cr", 415, FIX, 38, 5, "*run<Int32>:Nil", FIX }, "Array(?)#<<" },
	{ "def self.make: Item.make", { "make", FIX, 13, FIX, 39, 16, "*run<Int32>:Nil", FIX },
	  "Item.make" },
	{ "an instance method of a plain class", { "label", FIX, 17, FIX, 40, 16, "*run<Int32>:Nil",
						   FIX }, "Item#label" },
	{ "new in a block String.build inlined (no frame of its own): not the caller's",
	  { "new", STD "string/builder.cr", 11, STD "string/builder.cr", 26, 15, "*Item#label",
	    FIX }, "String::Builder.new" },
	{ "push(value) from Array#<<: the caller's instantiation",
	  { "push", STD "array.cr", 1358, STD "array.cr", 416, 5,
	    "*Array(String)@Array(T)#<<<String>:Array(String)", STD "array.cr" },
	  "Array(String)#push" },
	{ "Array(Item).from_json, defined as def Object.from_json",
	  { "from_json", STD "json/from_json.cr", 11, FIX, 46, 10, "*run<Int32>:Nil", FIX },
	  "Array(Item).from_json" },
	{ "... the new it calls, defined as def Array.new at top level",
	  { "new", STD "json/from_json.cr", 199, STD "json/from_json.cr", 13, 3,
	    "*Array(Item)::from_json", STD "json/from_json.cr" }, "Array(Item).new" },
	{ "new_from_json_pull_parser: declared at the include, a class method",
	  { "new_from_json_pull_parser", FIX, 4, FIX, 4, 3, "*Array(Item)::new", STD
	    "json/from_json.cr" }, "Item.new_from_json_pull_parser" },
	{ "JSON.parse", { "parse", STD "json.cr", 134, FIX, 47, 9, "*run<Int32>:Nil", FIX },
	  "JSON.parse" },
	{ "Parser.new written in JSON's namespace: JSON::Parser.new",
	  { "new", STD "json/parser.cr", 6, STD "json.cr", 135, 5, "*JSON::parse", STD "json.cr" },
	  "JSON::Parser.new" },
	{ "Hash(String, Int32).from_json",
	  { "from_json", STD "json/from_json.cr", 11, FIX, 48, 7, "*run<Int32>:Nil", FIX },
	  "Hash(String, Int32).from_json" },
	{ "new:internal from HTTP::Request.from_io: a class method of the caller's type",
	  { "new:internal", STD "http/request.cr", 64, STD "http/request.cr", 137, 17,
	    "*HTTP::Request::from_io:max_request_line_size:max_headers_size<IO, Int32, Int32>:"
	    "(HTTP::Request | HTTP::Status | Nil)", STD "http/request.cr" }, "HTTP::Request.new" },
	{ "upsert from the physical Hash#[]=",
	  { "upsert", STD "hash.cr", 332, STD "hash.cr", 1000, 5,
	    "*Hash(String, Int32)@Hash(K, V)#[]=<String, Int32>:Int32", STD "hash.cr" },
	  "Hash(String, Int32)#upsert" },
	{ "Hash(Thread, T).new: T unknown", { "new", STD "hash.cr", 197,
					       STD "crystal/thread_local_value.cr", 3, 13,
					       "*Crystal::ThreadLocalValue(?)::new",
					       STD "crystal/thread_local_value.cr" },
	  "Hash(?, ?).new" },
	{ "a generic's method on a local: its parameters unknown",
	  { "fetch", STD "hash.cr", 1172, FIX, 42, 27, "*run<Int32>:Nil", FIX }, "Hash(?, ?)#fetch" },
	{ "IO#<< on a block's io: some IO (abstract class IO), as Crystal writes it",
	  { "<<", STD "io.cr", 176, FIX, 19, 7, "*Item#label", FIX }, "IO+#<<" },
	{ "to_json, declared in class Object: some Object",
	  { "to_json", STD "json/to_json.cr", 2, FIX, 45, 10, "*run<Int32>:Nil", FIX },
	  "Object+#to_json" },
	{ "a module's method: some type including it",
	  { "initialize:__pull_for_json_serializable", STD "json/serialization.cr", 180, FIX, 4, 3,
	    "*Item::new_from_json_pull_parser", FIX }, "JSON::Serializable+#initialize" },
	{ "a lib's type is an alias: LibC::SizeT.new is UInt64.new, its declaring type",
	  { "new", STD "int.cr", 1488, STD "gc.cr", 3, 13, "__crystal_malloc", STD "gc.cr" },
	  "UInt64.new" },
	{ "def new_event is an instance method, new_ or not",
	  { "new_event", STD "crystal/system/unix/event_libevent.cr", 58,
	    STD "crystal/system/unix/event_loop_libevent.cr", 51, 5,
	    "*Crystal::EventLoop::create_fd_write_event", STD "crystal/system/unix/event_loop_libevent.cr" },
	  "Crystal::Event::Base#new_event" },
	{ "a unary minus is no call of - on the caller",
	  { "-", STD "int.cr", 1025, STD "crystal/dwarf.cr", 44, 19, "*Crystal::DWARF::read_signed_leb128",
	    STD "crystal/dwarf.cr" }, "Int32#-" },
	{ "self.x in a module extended for class methods: the caller's class method",
	  { "new_from_os_error", STD "system_error.cr", 106, STD "system_error.cr", 66, 7,
	    "*IO::Error::from_os_error<String, Errno>:IO::Error", STD "system_error.cr" },
	  "IO::Error.new_from_os_error" },
	{ "a proc literal: by its place",
	  { "->", STD "log/dispatch.cr", 51, STD "log/dispatch.cr", 51, 7, NULL, NULL },
	  "proc@dispatch.cr:51" },
	{ "a constant's initializer is its own symbol",
	  { "~STDOUT:read", STD "kernel.cr", 70, NULL, 0, 0, NULL, NULL }, NULL },
	{ "a fun is its own symbol",
	  { "__crystal_malloc64", STD "gc.cr", 17, NULL, 0, 0, NULL, NULL }, NULL },
	{ "a top-level method has no owner", { "run", FIX, 31, FIX, 55, 1, NULL, NULL }, NULL },
	/* the instance methods of the same type its body calls out of line */
	{ "items << it, whose inlined body calls Array(Item)#push",
	  { "<<", STD "array.cr", 415, FIX, 38, 5, "*run<Int32>:Nil", FIX,
	    (const char *[]){ "*Array(Item)@Array(T)#push<Item>:Array(Item)" }, 1 },
	  "Array(Item)#<<" },
	{ "push, calling check_needs_resize: Array(String)",
	  { "push", STD "array.cr", 1358, STD "array.cr", 416, 5, "*Array(?)#<<", STD "array.cr",
	    (const char *[]){ "*Array(String)@Array(T)#check_needs_resize:(Int32 | "
			      "Pointer(String) | Nil)" }, 1 },
	  "Array(String)#push" },
	{ "a Deque's <<, calling Deque(Fiber)#push",
	  { "<<", STD "deque.cr", 135, STD "crystal/scheduler.cr", 83, 18, NULL, NULL,
	    (const char *[]){ "*Deque(Fiber)@Deque(T)#push<Fiber>:Deque(Fiber)" }, 1 },
	  "Deque(Fiber)#<<" },
	{ "Hash#fetch calling find_entry: two type arguments",
	  { "fetch", STD "hash.cr", 1172, STD "hash.cr", 1097, 5, NULL, NULL,
	    (const char *[]){ "__crystal_raise_overflow", "*Hash(Thread, Deque(Fiber))@Hash(K, V)"
			      "#find_entry<Thread>:(Hash::Entry(Thread, Deque(Fiber)) | Nil)" }, 2 },
	  "Hash(Thread, Deque(Fiber))#fetch" },
	{ "an enum's to_s: the enum, not Enum",
	  { "to_s", STD "enum.cr", 131, STD "io.cr", 177, 5, NULL, NULL,
	    (const char *[]){ "*Crystal::DWARF::FORM@Enum#to_s:String" }, 1 },
	  "Crystal::DWARF::FORM#to_s" },
	{ "two receivers among the callees: which is self is not known",
	  { "push", STD "array.cr", 1358, STD "array.cr", 416, 5, NULL, NULL,
	    (const char *[]){ "*Array(String)@Array(T)#check_needs_resize:Nil",
			      "*Array(Int32)@Array(T)#check_needs_resize:Nil" }, 2 },
	  "Array(?)#push" },
	{ "a type of the same last name is another type (Deflate's Writer, not Gzip's)",
	  { "flush", STD "compress/gzip/writer.cr", 91, STD "http/web_socket/protocol.cr", 106, 5,
	    "*HTTP::WebSocket::Protocol#send<Slice(UInt8)>:Nil", STD "http/web_socket/protocol.cr",
	    (const char *[]){ "*Compress::Deflate::Writer#flush:Nil" }, 1 },
	  "Compress::Gzip::Writer#flush" },
	/* a receiver variable's declared type, the caller's parameters filled in */
	{ "@buffer[@size] = value in Array(Item)#push: @buffer : Pointer(T)",
	  { "[]=", STD "pointer.cr", 131, STD "array.cr", 1360, 5,
	    "*Array(Item)@Array(T)#push<Item>:Array(Item)", STD "array.cr" },
	  "Pointer(Item)#[]=" },
	{ "@indices.null? in a Hash: @indices : Pointer(UInt8)",
	  { "null?", STD "pointer.cr", 68, STD "hash.cr", 544, 10,
	    "*Hash(Thread, Crystal::Event)@Hash(K, V)#resize:Nil", STD "hash.cr" },
	  "Pointer(UInt8)#null?" },
	{ "@out_slice.empty? in a plain class: @out_slice : Bytes",
	  { "empty?", STD "indexable.cr", 697, STD "io/encoding.cr", 81, 23,
	    "*IO::Decoder#read<IO::FileDescriptor+>:Nil", STD "io/encoding.cr" },
	  "Slice(UInt8)#empty?" },
	{ "@entries[index]: Pointer(Entry(K, V)), Entry written relative: unknown",
	  { "[]", STD "pointer.cr", 118, STD "hash.cr", 788, 5,
	    "*Hash(Thread, Deque(Fiber))@Hash(K, V)#get_entry<Int32>:Hash::Entry(Thread, "
	    "Deque(Fiber))", STD "hash.cr" }, "Pointer(?)#[]" },
	{ "@indices.as(UInt16*)[index]: a cast, not the declared type",
	  { "[]", STD "pointer.cr", 118, STD "hash.cr", 723, 15,
	    "*Hash(Thread, Deque(Fiber))@Hash(K, V)#find_entry<Thread>:Nil", STD "hash.cr" },
	  "Pointer(?)#[]" },
	{ "slice.copy_to(...) in String::Builder#write(slice : Bytes): the parameter's type",
	  { "copy_to", STD "slice.cr", 455, STD "string/builder.cr", 50, 5,
	    "*String::Builder#write<Slice(UInt8)>:Nil", STD "string/builder.cr", NULL, 0, 41 },
	  "Slice(UInt8)#copy_to" },
	{ "chars.null? in String.new(chars : UInt8*)",
	  { "null?", STD "pointer.cr", 68, STD "string.cr", 196, 78,
	    "*String::new<Pointer(UInt8)>:String", STD "string.cr", NULL, 0, 195 },
	  "Pointer(UInt8)#null?" },
	/* written types as the compiler spells them */
	{ "[] of Void*: a pointer type",
	  { "new", STD "array.cr", 94, STD "exception/call_stack/libunwind.cr", 41, 17,
	    "*raise<ArgumentError>:NoReturn", STD "raise.cr" }, "Array(Pointer(Void)).new" },
	{ "Array({Int32, Int32, Int32}).new: a tuple type",
	  { "new", STD "array.cr", 112, STD "unicode/data.cr", 11, 12,
	    "*Unicode::check_upcase_ranges<Char>:Char", STD "unicode/unicode.cr" },
	  "Array(Tuple(Int32, Int32, Int32)).new" },
	{ "Bytes.new: Slice(UInt8)",
	  { "new", STD "slice.cr", 85, STD "crystal/dwarf/info.cr", 95, 34,
	    "*Crystal::DWARF::Info#read_attribute_value<Crystal::DWARF::FORM>:Bool",
	    STD "crystal/dwarf/info.cr" }, "Slice(UInt8).new" },
	{ "a named tuple type: its keys kept (a relative name in the arguments stays as written)",
	  { "new", STD "hash.cr", 197, STD "time/location/loader.cr", 2, 22, "__crystal_main",
	    NULL }, "Hash(String, NamedTuple(time: Time, location: Location)).new" },
	{ "WeakRef.new(log): a generic type's arguments left to the compiler",
	  { "new", STD "weak_ref.cr", 16, STD "log/builder.cr", 79, 25, "*Log::for<String>:Log",
	    STD "log/main.cr" }, "WeakRef(?).new" },
	/* a method of a type the running one is below */
	{ "Exception's initialize, run by a subclass's new",
	  { "initialize", STD "exception.cr", 24, STD "exception.cr", 91, 5,
	    "*ArgumentError::new<String>:ArgumentError", STD "exception.cr" },
	  "Exception+#initialize" },
	{ "Enum#==, run on an enum",
	  { "==", STD "enum.cr", 319, STD "crystal/system/unix/file_descriptor.cr", 14, 33,
	    "*IO::FileDescriptor+@Crystal::System::FileDescriptor#unbuffered_read<Slice(UInt8)>:"
	    "Int32", STD "crystal/system/unix/file_descriptor.cr" }, "Enum+#==" },
	{ "Int.from_io, a class method run on an Int type",
	  { "from_io", STD "int.cr", 762, STD "io.cr", 916, 5,
	    "*IO::FileDescriptor+@IO#read_bytes<UInt16.class>:UInt16", STD "io.cr" },
	  "Int+.from_io" },
	{ "Tuple#[]: Tuple's parameters are the compiler's",
	  { "[]", STD "tuple.cr", 194, STD "time.cr", 1498, 23,
	    "*Time#year_month_day_day_year:Tuple(Int32, Int32, Int32, Int32)", STD "time.cr" },
	  "Tuple(?)#[]" },
	{ "a class method called is no receiver",
	  { "push", STD "array.cr", 1358, STD "array.cr", 416, 5, NULL, NULL,
	    (const char *[]){ "*Array(Int32)::new<Int32>:Array(Int32)" }, 1 },
	  "Array(?)#push" },
};

int main(void)
{
	struct source_cache sc = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct inline_case *c = &cases[i];
		char *symbol = crystal_qualify(&sc, &c->site);
		char shown[512] = "(null)";
		char what[600];

		if (symbol)
			crystal_display(symbol, CRYSTAL_SHORT, shown, sizeof(shown));
		snprintf(what, sizeof(what), "%s: %s (symbol %s)", c->what, c->want ? c->want : "none",
			 symbol ? symbol : "none");
		check(what, c->want ? symbol && !strcmp(shown, c->want) : !symbol);
		if (c->want && (!symbol || strcmp(shown, c->want)))
			printf("#   shown: %s\n", shown);
		free(symbol);
	}
	source_cache_free(&sc);
	return unit_summary();
}
