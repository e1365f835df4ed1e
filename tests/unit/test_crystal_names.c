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

#include "lib/crystal_display.h"
#include "lib/crystal_names.h"
#include "unit_check.h"

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
	const char *buffer;	/* a block that is not an object: "Owner buffer" */
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
	  "*Array(Int32)@Array(T)#resize_to_capacity<Int32>:Pointer(Int32)", "", "Array(Int32) buffer" },
	/* an array's elements: the constructor names the type, the buffer is noted */
	{ { "GC_malloc", "__crystal_malloc64", "*Pointer(Point)@Pointer(T)::malloc<Int32>:Pointer(Point)",
	    "*Array(Point)@Array(T)#initialize<Int32>:Nil", "*Array(Point)@Array(T)::new<Int32>:Array(Point)",
	    "main", NULL },
	  "main", "Array(Point)", "Array(Point) buffer" },
	/* a Hash's entries, Pointer.malloc'd by its own method */
	{ { "GC_malloc", "__crystal_malloc64",
	    "*Pointer(Hash::Entry(String, Int32))@Pointer(T)::malloc<Int32>:Pointer(Hash::Entry(String, Int32))",
	    "*Hash(String, Int32)@Hash(K, V)#malloc_entries<Int32>:Pointer(Hash::Entry(String, Int32))",
	    "*Hash(String, Int32)@Hash(K, V)#upsert<String, Int32>:(Hash::Entry(String, Int32) | Nil)", NULL },
	  "*Hash(String, Int32)@Hash(K, V)#malloc_entries<Int32>:Pointer(Hash::Entry(String, Int32))", "",
	  "Hash(String, Int32) buffer" },
	/* a union's members cut as in function names */
	{ { "GC_realloc", "*GC::realloc<Pointer(Void), UInt64>:Pointer(Void)",
	    "*Array(JSON::Builder::ArrayState | JSON::Builder::DocumentEndState | JSON::Builder::DocumentStartState | "
	    "JSON::Builder::ObjectState | JSON::Builder::StartState)@Array(T)#resize_to_capacity<Int32>:"
	    "Pointer(JSON::Builder::ArrayState | JSON::Builder::DocumentEndState | JSON::Builder::DocumentStartState | "
	    "JSON::Builder::ObjectState | JSON::Builder::StartState)", "main", NULL },
	  "*Array(JSON::Builder::ArrayState | JSON::Builder::DocumentEndState | JSON::Builder::DocumentStartState | "
	  "JSON::Builder::ObjectState | JSON::Builder::StartState)@Array(T)#resize_to_capacity<Int32>:"
	  "Pointer(JSON::Builder::ArrayState | JSON::Builder::DocumentEndState | JSON::Builder::DocumentStartState | "
	  "JSON::Builder::ObjectState | JSON::Builder::StartState)", "",
	  "Array(JSON::Builder::ArrayState | …) buffer" },
	{ { "GC_malloc", "*/usr/lib/crystal/lib/raise.cr::LEBReader::new<Pointer(UInt8)>:/usr/lib/crystal/lib/raise.cr::LEBReader",
	    "main", NULL }, "main", "LEBReader" },
	/* a Pointer buffer no type owns: its own type */
	{ { "GC_malloc", "__crystal_malloc64", "*Pointer(Int64)@Pointer(T)::malloc<Int32>:Pointer(Int64)",
	    "*make_buffer<Int32>:Pointer(Int64)", "main", NULL },
	  "*make_buffer<Int32>:Pointer(Int64)", "", "Pointer(Int64)" },
	/* GC.realloc of a String::Builder: the bytes of the String it becomes */
	{ { "GC_realloc", "*GC::realloc<Pointer(Void), UInt64>:Pointer(Void)",
	    "*String::Builder#resize_to_capacity<Int32>:Pointer(UInt8)", "main", NULL },
	  "*String::Builder#resize_to_capacity<Int32>:Pointer(UInt8)", "String", "" },
	/* String.new with a block, inlined without a frame: a String */
	{ { "GC_malloc_atomic", "*GC::malloc_atomic<UInt64>:Pointer(Void)",
	    "*GC::malloc_atomic<UInt32>:Pointer(Void)", "*String#byte_slice?<Int32, Int32>:(String | Nil)",
	    "main", NULL },
	  "*String#byte_slice?<Int32, Int32>:(String | Nil)", "String", "" },
	/* a constructor by another name, its allocate inlined */
	{ { "GC_malloc", "*GC::malloc<UInt64>:Pointer(Void)", "__crystal_malloc64",
	    "*Item::new_from_json_pull_parser<JSON::PullParser>:Item", "main", NULL },
	  "*Item::new_from_json_pull_parser<JSON::PullParser>:Item", "Item", "" },
	/* a method's own block: its owner's buffer */
	{ { "GC_malloc_atomic", "*GC::malloc_atomic<UInt64>:Pointer(Void)",
	    "*IO::FileDescriptor@IO::Buffered#out_buffer:Pointer(UInt8)", "main", NULL },
	  "*IO::FileDescriptor@IO::Buffered#out_buffer:Pointer(UInt8)", "", "IO::FileDescriptor buffer" },
	/* an object built inside another type's constructor: that one is the site */
	{ { "GC_malloc", "*Bar::new:Bar", "*Foo#initialize:Nil", "*Foo::new:Foo", "main", NULL },
	  "*Foo#initialize:Nil", "Bar" },
	{ { "GC_malloc", "__crystal_malloc64", NULL }, NULL, "" },
};

/* Real symbols of Crystal 1.x's standard library and of programs built
 * with it (nm on tests/programs and demo/), as every output shows them. */
static const struct {
	const char *symbol;
	const char *shown;
} displays[] = {
	/* generics: the receiver's instantiation stays, "@Defining" goes */
	{ "*Array(String)@Array(T)#push<String>:Array(String)", "Array(String)#push" },
	{ "*Array(String)@Array(T)#resize_to_capacity<Int32>:Pointer(String)",
	  "Array(String)#resize_to_capacity" },
	{ "*Hash(String, Int32)@Hash(K, V)#compute_indices_bytesize<Int32>:Int8",
	  "Hash(String, Int32)#compute_indices_bytesize" },
	{ "*Hash(String, Int32)@Hash(K, V)::new:Hash(String, Int32)", "Hash(String, Int32).new" },
	{ "*Hash(Signal, Proc(Signal, Nil))@Hash(K, V)#find_entry_with_index_linear_scan<Signal>:"
	  "(Tuple(Hash::Entry(Signal, Proc(Signal, Nil)), Int32) | Nil)",
	  "Hash(Signal, Proc(Signal, Nil))#find_entry_with_index_linear_scan" },
	{ "*Array(Tuple(UInt64, UInt64))@Array(T)#initialize<Int32>:Pointer(Tuple(UInt64, UInt64))",
	  "Array(Tuple(UInt64, UInt64))#initialize" },
	{ "*StaticArray(UInt8, 8)@Indexable::Mutable(T)#reverse!:StaticArray(UInt8, 8)",
	  "StaticArray(UInt8, 8)#reverse!" },
	{ "*Crystal::PointerLinkedList(Channel::Receiver(Nil))@Crystal::PointerLinkedList(T)#empty?:Bool",
	  "Crystal::PointerLinkedList(Channel::Receiver(Nil))#empty?" },
	{ "*String::Formatter(Tuple(Int32, Float64))@String::Formatter(A)#next_char:Char",
	  "String::Formatter(Tuple(Int32, Float64))#next_char" },
	{ "*Enumerable::Reflect(Float64)@Enumerable::Reflect(X)::first:Float64.class",
	  "Enumerable::Reflect(Float64).first" },
	/* a generic's constructor is named after the generic: the type it makes */
	{ "*Range(B, E)::new<Int32, Nil, Bool>:Range(Int32, Nil)", "Range(Int32, Nil).new" },
	/* unions: short ones whole, long ones cut after the first member */
	{ "*String#byte_slice?<Int32, Int32>:(String | Nil)", "String#byte_slice?" },
	{ "*Array(JSON::Builder::ArrayState | JSON::Builder::DocumentEndState | "
	  "JSON::Builder::DocumentStartState | JSON::Builder::ObjectState | JSON::Builder::StartState)"
	  "@Array(T)#resize_to_capacity<Int32>:Pointer(JSON::Builder::ArrayState | "
	  "JSON::Builder::DocumentEndState | JSON::Builder::DocumentStartState | "
	  "JSON::Builder::ObjectState | JSON::Builder::StartState)",
	  "Array(JSON::Builder::ArrayState | …)#resize_to_capacity" },
	{ "*Hash(String, Int32 | String | Nil)@Hash(K, V)#[]?<String>:(Int32 | String | Nil)",
	  "Hash(String, Int32 | String | Nil)#[]?" },
	{ "*Array(Tuple(Crystal::DWARF::AT, Crystal::DWARF::FORM, Bool | Int32 | Int64 | Slice(UInt8) | "
	  "String | UInt128 | UInt16 | UInt32 | UInt64 | UInt8))@Array(T)#initialize:Nil",
	  "Array(Tuple(Crystal::DWARF::AT, Crystal::DWARF::FORM, Bool | …))#initialize" },
	/* operators */
	{ "*Array(CensusBar)@Array(T)#<<<CensusBar>:Array(CensusBar)", "Array(CensusBar)#<<" },
	{ "*File@IO#<<<String>:File", "File#<<" },
	{ "*Int32@Comparable(T)#<<Int32>:Bool", "Int32#<" },
	{ "*Int32@Int#<=><Int32>:Int32", "Int32#<=>" },
	{ "*Int32@Comparable(T)#<=<Int32>:Bool", "Int32#<=" },
	{ "*UInt32@Int#//<UInt32>:UInt32", "UInt32#//" },
	{ "*Array(Crystal::DWARF::Abbrev)@Indexable(T)#[]?<UInt32>:(Crystal::DWARF::Abbrev | Nil)",
	  "Array(Crystal::DWARF::Abbrev)#[]?" },
	{ "*Pointer(String)@Pointer(T)#[]=<Int32, String>:String", "Pointer(String)#[]=" },
	{ "*Crystal::DWARF::LNS@Object#===<Crystal::DWARF::LNS>:Bool", "Crystal::DWARF::LNS#===" },
	{ "*String#==<String>:Bool", "String#==" },
	{ "*Pointer(UInt8)@Pointer(T)#+<Int32>:Pointer(UInt8)", "Pointer(UInt8)#+" },
	{ "*ENV::[]?<String>:(String | Nil)", "ENV.[]?" },
	/* class methods, setters, predicates, named arguments */
	{ "*String::interpolation<String, Int32>:String", "String.interpolation" },
	{ "*Float::Printer::Dragonbox::WUInt::umul64<UInt32, UInt32>:UInt64",
	  "Float::Printer::Dragonbox::WUInt.umul64" },
	{ "*IO::Error@SystemError::ClassMethods::build_message<String>:String",
	  "IO::Error.build_message" },
	{ "*HTTP::Server::Response#status=<HTTP::Status>:HTTP::Status",
	  "HTTP::Server::Response#status=" },
	{ "*Path#starts_with_separator?:Bool", "Path#starts_with_separator?" },
	{ "*Time::new:seconds:nanoseconds:location<Int64, Int32, Time::Location>:Time", "Time.new" },
	{ "*Fiber::new:name<String, &Proc(Nil)>:Fiber", "Fiber.new" },
	{ "*IO::FileDescriptor+@IO::Buffered#write_byte<UInt8>:(IO::FileDescriptor+ | Nil)",
	  "IO::FileDescriptor+#write_byte" },
	{ "*Crystal::OnceState#once'<Pointer(Bool), Pointer(Void)>:(Pointer(Bool) | Nil)",
	  "Crystal::OnceState#once'" },
	/* top-level methods, private types, C structs */
	{ "*incoming_order<Int64, Random::PCG32>:String", "incoming_order" },
	{ "*raise<Socket::Error+>:NoReturn", "raise" },
	{ "*_carrying_mul<UInt64, UInt64>:Tuple(UInt64, UInt64)", "_carrying_mul" },
	{ "*/usr/lib/crystal/lib/raise.cr::LEBReader#read_uleb128:UInt64", "LEBReader#read_uleb128" },
	{ "*struct.LibC::Timeval::new:struct.LibC::Timeval", "struct.LibC::Timeval.new" },
	/* procs, by where they are written */
	{ "~procProc(Fiber, (IO::FileDescriptor | Nil))@/usr/lib/crystal/lib/fiber.cr:98",
	  "proc@fiber.cr:98" },
	{ "~proc3Proc(Pointer(Void), Pointer(Void), Nil)@/usr/lib/crystal/lib/gc/boehm.cr:193",
	  "proc@boehm.cr:193" },
	/* inlined frames named from source (crystal_source.h) */
	{ "Point::new", "Point.new" }, { "Leaf#initialize", "Leaf#initialize" },
	{ "Pointer(T)::malloc", "Pointer(T).malloc" }, { "new", "new" },
	/* not Crystal methods: as they are */
	{ "GC_malloc_atomic", "GC_malloc_atomic" }, { "__crystal_main", "__crystal_main" },
	{ "~CUSTOMERS:init", "CUSTOMERS:init" },
	{ "~Crystal::Signal::handlers:read", "Crystal::Signal::handlers:read" },
	{ "~match<(Int32 | Int64)>", "~match<(Int32 | Int64)>" }, { "[libgc.so.1.5.1+0x1a2b0]", "[libgc.so.1.5.1+0x1a2b0]" },
	{ "main", "main" }, { "0x7f00deadbeef", "0x7f00deadbeef" },
};

/* One program's overloads and instantiations: each told apart, with no
 * more than it takes. */
static const char *const program[] = {
	"*Array(Item)@Array(T)::new:Array(Item)",
	"*Array(Item)@Array(T)::new<Int32>:Array(Item)",
	"*Array(String)@Array(T)#push<String>:Array(String)",
	"*Array(Int32)@Enumerable(T)#join<String>:String",
	"*Array(Int32)@Indexable(T)#join<String>:String",
	"*Node#initialize<Int32>:Int32",
	"*Node#initialize<Int32>:Nil",
	"*Char::Reader::new:at_end<String>:Char::Reader",
	"*Char::Reader::new<String>:Char::Reader",
	"*Array(A | B | C | D)@Array(T)#pop:(A | B | C | D)",
	"*Array(A | B | C | E)@Array(T)#pop:(A | B | C | E)",
};
static const char *const program_shown[] = {
	"Array(Item).new()", "Array(Item).new(Int32)", "Array(String)#push",
	"Array(Int32)@Enumerable(T)#join(String)", "Array(Int32)@Indexable(T)#join(String)",
	"Node#initialize<Int32>:Int32", "Node#initialize<Int32>:Nil",
	"Char::Reader.new:at_end(String)", "Char::Reader.new(String)",
	"Array(A | B | C | D)@Array(T)#pop()", "Array(A | B | C | E)@Array(T)#pop()",
};

int main(void)
{
	char what[2048], type[128];

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
	for (size_t i = 0; i < sizeof(displays) / sizeof(displays[0]); i++) {
		char shown[512];

		crystal_display(displays[i].symbol, CRYSTAL_SHORT, shown, sizeof(shown));
		snprintf(what, sizeof(what), "%s shows as %s (got %s)", displays[i].symbol,
			 displays[i].shown, shown);
		check(what, !strcmp(shown, displays[i].shown));
	}
	{
		struct crystal_namer *n = crystal_namer_new();
		char shown[512];

		for (size_t i = 0; i < sizeof(program) / sizeof(program[0]); i++)
			crystal_namer_add(n, program[i]);
		for (size_t i = 0; i < sizeof(program) / sizeof(program[0]); i++) {
			crystal_namer_display(n, program[i], shown, sizeof(shown));
			snprintf(what, sizeof(what), "in one program %s shows as %s (got %s)",
				 program[i], program_shown[i], shown);
			check(what, !strcmp(shown, program_shown[i]));
		}
		crystal_namer_display(n, "Point::new", shown, sizeof(shown));
		check("a name the program's symbols do not hold is shown by the rule",
		      !strcmp(shown, "Point.new"));
		crystal_namer_free(n);
		/* cut at a character boundary, never inside the ellipsis */
		crystal_display(displays[12].symbol, CRYSTAL_SHORT, shown, 33);
		check("a name cut short stays valid UTF-8",
		      !strcmp(shown, "Array(JSON::Builder::ArrayState "));
		{
			const char *file;
			const char *proc = "~procProc(Fiber, (IO::FileDescriptor | Nil))@"
					   "/usr/lib/crystal/lib/fiber.cr:98";
			size_t len;
			unsigned long line;

			check("a proc's place: file and line",
			      crystal_proc_place(proc, &file, &len, &line) &&
				      len == strlen("/usr/lib/crystal/lib/fiber.cr") &&
				      !strncmp(file, "/usr/lib/crystal/lib/fiber.cr", len) && line == 98);
			check("no place for a method", !crystal_proc_place(displays[0].symbol, &file,
									  &len, &line));
		}
		check("the length of a name is known without a buffer",
		      crystal_display(displays[0].symbol, CRYSTAL_SHORT, NULL, 0) ==
			      strlen(displays[0].shown));
	}
	return unit_summary();
}
