// SPDX-License-Identifier: MIT
/*
 * -f heap: a heap snapshot (heap.h) by type, sorted by retained bytes, then
 * the objects that retain the most, each with its shortest path from a
 * root. -f heap-graph: those paths for the objects of one type, as a
 * mermaid flowchart. A type's retained bytes are those of its objects that no other
 * object of the same type dominates (a list's nodes are not counted twice).
 * Types are named from the program's code (type_ids.h); an object whose
 * first word names no type is counted as a block that holds pointers or
 * not.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/crystal_names.h"
#include "lib/elf_file.h"
#include "converter/heap.h"
#include "converter/output.h"
#include "lib/str_table.h"
#include "lib/u64_table.h"
#include "lib/util.h"

#define TOP_TYPES 60
#define TOP_OBJECTS 10
#define PATH_MAX_SHOWN 16
#define KEY_NO_TYPE_PTRS (1ull << 40)
#define KEY_NO_TYPE_ATOMIC (KEY_NO_TYPE_PTRS + 1)
#define KEY_HELD (1ull << 41)	/* + index of a name in block_names */

/* Names of blocks without a type id (an Array's or Hash's buffer, a
 * String::Builder's bytes) by what holds them: the type of the first
 * object found pointing to them, breadth first ("Array(Node) buffer"),
 * else the kind of root ("block on a fiber stack"), through holders
 * without a type id either. One table row per name. */
struct block_names {
	struct str_table names;
};

struct type_row {
	uint64_t key;
	const char *name;
	uint64_t objects, bytes, retained;
	uint32_t active;		/* objects of it on the dominator-tree path */
};

struct rows {
	struct type_row *v;
	size_t n, cap;
	struct u64_table by_key;	/* key + 1 -> index */
};

static const char *typed_name(const struct model *m, const struct heap *h, uint32_t obj,
			      uint32_t *w)
{
	return heap_obj_first_word(h, obj, w) ? type_ids_name(&m->code_types, *w) : NULL;
}

/* What node is named after: an object pointing to it, else its root. */
static uint32_t holder_of(const struct heap *h, uint32_t node)
{
	return h->holder[node] != HEAP_NONE ? h->holder[node] : h->parent[node];
}

/* The name of untyped object obj by its holder, or NULL. */
static const char *held_name(const struct model *m, const struct heap *h,
			     struct block_names *bn, uint32_t obj, uint32_t *index)
{
	static const char *const on_root[] = {
		[ALYS_ROOT_DATA] = "block held by a global", [ALYS_ROOT_STACK] = "block on a thread stack",
		[ALYS_ROOT_REGISTERS] = "block in a thread's registers",
		[ALYS_ROOT_FIBER] = "block on a fiber stack",
		[ALYS_ROOT_REGISTERED] = "block in a registered root",
	};
	uint32_t holder = holder_of(h, obj + h->nr_roots + 1), w;
	const char *type = NULL;
	char text[SITE_TYPE_MAX + 16];

	/* through untyped holders (a list of the collector's own blocks) to
	 * the first typed object or root: the chain is named as its head */
	for (int hops = 0; hops < 16 && heap_is_object(h, holder); hops++) {
		type = typed_name(m, h, heap_obj(h, holder), &w);
		if (type)
			break;
		holder = holder_of(h, holder);
	}
	if (holder == HEAP_NONE || holder == 0 || (heap_is_object(h, holder) && !type))
		return NULL;
	if (type) {
		if (!crystal_buffer_name(type, strlen(type), text, sizeof(text)))
			return NULL;
	} else {
		uint32_t kind = h->roots[holder - 1].kind;

		if (kind >= sizeof(on_root) / sizeof(on_root[0]) || !on_root[kind])
			return NULL;
		snprintf(text, sizeof(text), "(%s)", on_root[kind]);
	}
	*index = str_table_intern(&bn->names, text);
	return str_table_get(&bn->names, *index);
}

static uint64_t type_key(const struct model *m, const struct heap *h, struct block_names *bn,
			 uint32_t obj, const char **name)
{
	uint32_t w;

	if ((*name = typed_name(m, h, obj, &w)))
		return w;
	if ((*name = held_name(m, h, bn, obj, &w)))
		return KEY_HELD + w;
	if (heap_obj_atomic(h, obj)) {
		*name = "(pointer-free block, no type id)";
		return KEY_NO_TYPE_ATOMIC;
	}
	*name = "(block holding pointers, no type id)";
	return KEY_NO_TYPE_PTRS;
}

static struct type_row *row_of(struct rows *r, uint64_t key, const char *name)
{
	struct u64_slot *s = u64_table_get(&r->by_key, key + 1);

	if (s)
		return &r->v[s->a];
	r->v = grow_array(r->v, &r->cap, r->n + 1, sizeof(*r->v));
	r->v[r->n] = (struct type_row){ .key = key, .name = name };
	u64_table_put(&r->by_key, key + 1, r->n, 0);
	return &r->v[r->n++];
}

static int by_retained(const void *a, const void *b)
{
	const struct type_row *x = a, *y = b;

	if (x->retained != y->retained)
		return x->retained < y->retained ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * Walk the dominator tree depth first; an object adds its retained bytes
 * to its type only when no object of its type is above it.
 */
static void type_rows(const struct model *m, const struct heap *h, struct block_names *bn,
		      struct rows *r)
{
	uint32_t *first = xcalloc((size_t)h->nr_nodes + 1, sizeof(*first));
	uint32_t *child = xcalloc(h->nr_reached ? h->nr_reached : 1, sizeof(*child));
	uint32_t *fill = xcalloc(h->nr_nodes, sizeof(*fill));
	uint32_t *stack = xcalloc((size_t)h->nr_reached + 1, sizeof(*stack));
	uint32_t *row = xcalloc(h->nr_nodes, sizeof(*row));
	uint8_t *done = xcalloc(h->nr_nodes, 1);
	size_t sp = 0;

	for (uint32_t i = 1; i < h->nr_reached; i++)
		first[h->idom[h->rpo[i]] + 1]++;
	for (uint32_t i = 0; i < h->nr_nodes; i++)
		first[i + 1] += first[i];
	for (uint32_t i = 1; i < h->nr_reached; i++) {
		uint32_t v = h->rpo[i], d = h->idom[v];

		child[first[d] + fill[d]++] = v;
	}
	for (uint32_t i = 0; i < h->nr_reached; i++) {
		uint32_t v = h->rpo[i];
		const char *name = NULL;
		struct type_row *tr;
		uint64_t key;

		if (!heap_is_object(h, v))
			continue;
		key = type_key(m, h, bn, heap_obj(h, v), &name);
		tr = row_of(r, key, name);
		row[v] = (uint32_t)(tr - r->v);
		tr->objects++;
		tr->bytes += heap_obj_size(h, heap_obj(h, v));
	}
	/* enter a node: count it if its type is not active; leave: release */
	stack[sp++] = 0;
	while (sp) {
		uint32_t v = stack[sp - 1];

		if (!done[v]) {
			done[v] = 1;
			if (heap_is_object(h, v)) {
				struct type_row *tr = &r->v[row[v]];

				if (!tr->active++)
					tr->retained += h->retained[v];
			}
			for (uint32_t k = first[v]; k < first[v + 1]; k++)
				stack[sp++] = child[k];
			continue;
		}
		sp--;
		if (heap_is_object(h, v) && done[v] == 1) {
			r->v[row[v]].active--;
			done[v] = 2;
		}
	}
	free(first);
	free(child);
	free(fill);
	free(stack);
	free(row);
	free(done);
}

/* A source file of Crystal's standard library, not the program's: where
 * packages and the official tarballs put it (Debian's /usr/lib/crystal/lib,
 * the tarballs' share/crystal/src), or any SRC/ holding prelude.cr (a
 * compiler built from its source tree, whose DWARF names that tree). The
 * last SRC/ looked at is remembered: a stack's frames share a few. */
static bool stdlib_file(const char *file)
{
	static char last_src[PATH_MAX];
	static bool last_is_std;
	const char *src = strstr(file, "/src/");
	char prelude[PATH_MAX];

	if (strstr(file, "/crystal/lib/") || strstr(file, "/crystal/src/"))
		return true;
	for (; src; src = strstr(src + 1, "/src/")) {
		int n = snprintf(prelude, sizeof(prelude), "%.*s/src/prelude.cr", (int)(src - file),
				 file);
		bool is_std;

		if (n < 0 || n >= (int)sizeof(prelude))
			continue;
		if (!strcmp(prelude, last_src)) {
			is_std = last_is_std;
		} else {
			is_std = !access(prelude, F_OK);
			memcpy(last_src, prelude, (size_t)n + 1);
			last_is_std = is_std;
		}
		if (is_std)
			return true;
	}
	return false;
}

/*
 * The innermost frame of the program's own code on a stack: the first word
 * from the stack pointer up that is a return address into a Crystal
 * function of a file outside the standard library (a heuristic: a stale
 * return address could come first, and a stack of runtime code only has
 * none).
 */
static bool stack_frame(const struct model *m, const struct trace_root *r, struct outbuf *o)
{
	for (size_t off = 0; off + 8 <= r->len; off += 8) {
		const struct sym_entry *e;
		uint64_t w;

		memcpy(&w, r->bytes + off, 8);
		if (!trace_find_mapping(m->t, w))
			continue;
		e = symbolizer_entry(m->sym, symbolizer_resolve(m->sym, w, 1));
		for (uint32_t k = 0; k < e->nr_frames; k++) {
			const struct sym_frame *f = &e->frames[k];

			if (!f->resolved || (f->symbol[0] != '*' && f->symbol[0] != '~' &&
					     strcmp(f->symbol, "__crystal_main")) ||
			    !f->file || stdlib_file(f->file))
				continue;
			outbuf_printf(o, " at %s", base_name(f->file));
			if (f->line)
				outbuf_printf(o, ":%" PRIu32, f->line);
			outbuf_printf(o, " in %s", f->name);
			return true;
		}
	}
	return false;
}

/* A constant or class variable by where the program defines it, for a
 * newcomer to the heap: its initializer "~NAME:init" starts at the
 * definition's line. */
static bool where_defined(struct outbuf *o, const struct model *m, struct elf_file *ef,
			  uint64_t bias, const char *sym, uint64_t in_sym)
{
	char init[600];
	GElf_Addr vaddr;
	GElf_Xword size;
	const struct sym_entry *e;
	const struct sym_frame *f;
	const char *last;

	/* ~NAME:init in Crystal 1.6, ~NAME:const_init in 1.14 and later */
	snprintf(init, sizeof(init), "~%s:init", sym);
	if (!elf_file_find_symbol(ef, init, &vaddr, &size)) {
		snprintf(init, sizeof(init), "~%s:const_init", sym);
		if (!elf_file_find_symbol(ef, init, &vaddr, &size))
			return false;
	}
	e = symbolizer_entry(m->sym, symbolizer_resolve(m->sym, vaddr + bias, 0));
	f = &e->frames[e->nr_frames - 1];
	if (!f->file)
		return false;
	outbuf_str(o, sym);
	if (in_sym)
		outbuf_printf(o, "+%" PRIu64, in_sym);
	/* REG, Foo::MAX: a constant; Crystal::Signal::pipe: a class variable */
	last = strrchr(sym, ':');
	last = last ? last + 1 : sym;
	outbuf_printf(o, " (%s, %s", *last >= 'A' && *last <= 'Z' ? "constant" : "class variable",
		      base_name(f->file));
	if (f->line)
		outbuf_printf(o, ":%" PRIu32, f->line);
	outbuf_char(o, ')');
	return true;
}

/* A root's word by the symbol that holds it, where the program's symbols
 * say: a constant or class variable by itself and where it is defined
 * ("REG (constant, heap_graph.cr:35)"), another symbol with its region
 * ("data libgc.so.1 GC_arrays+8"); a stack by the program's innermost
 * frame on it; registers by name; else the root's own name. */
static void root_text(struct outbuf *o, const struct model *m, const struct trace_root *r,
		      uint32_t off)
{
	const struct trace *t = m->t;
	uint64_t addr = r->addr + off, in_sym;
	char sym[512];

	/* x86-64 struct user_regs_struct, as ptrace gives the registers */
	static const char *const regs[] = {
		"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax",
		"rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss",
		"fs_base", "gs_base", "ds", "es", "fs", "gs",
	};

	if (r->kind != ALYS_ROOT_DATA)
		outbuf_str(o, r->name);
	if (r->kind == ALYS_ROOT_REGISTERS) {
		if (off % 8 == 0 && off / 8 < sizeof(regs) / sizeof(regs[0]))
			outbuf_printf(o, " register %s", regs[off / 8]);
		else
			outbuf_printf(o, " registers +%" PRIu32, off);
		return;
	}
	if (r->kind == ALYS_ROOT_STACK || r->kind == ALYS_ROOT_FIBER) {
		/* "fiber 0x… stack +64 at heap_graph.cr:51 in start_holders" */
		outbuf_printf(o, " stack +%" PRIu32, off);
		stack_frame(m, r, o);
		return;
	}
	if (r->kind != ALYS_ROOT_DATA) {
		outbuf_printf(o, " +%" PRIu32, off);
		return;
	}
	/* the file the region belongs to: its mapping in the trace has the
	 * same base name; its load bias maps addr back to a symbol */
	for (size_t i = 0; i < t->nr_maps; i++) {
		const struct trace_mapping *map = &t->maps[i];
		const char *space = strchr(r->name, ' ');
		struct elf_file ef;
		char err[256];
		uint64_t bias;
		bool named;

		const char *file;

		if (!map->path.ptr || !space || strcmp(base_name(map->path.ptr), space + 1) ||
		    !(file = symbolizer_mapping_file(m->sym, i)) ||
		    elf_file_open(&ef, file, err, sizeof(err)))
			continue;
		named = elf_mapping_bias(ef.elf, map->start, map->offset, &bias) &&
			elf_file_symbol_at(&ef, addr - bias, sym, sizeof(sym), &in_sym);
		if (named && !where_defined(o, m, &ef, bias, sym, in_sym)) {
			outbuf_printf(o, "%s %s", r->name, sym);
			if (in_sym)
				outbuf_printf(o, "+%" PRIu64, in_sym);
		}
		elf_file_close(&ef);
		if (named)
			return;
		break;
	}
	outbuf_printf(o, "%s 0x%" PRIx64, r->name, addr);
}

static void object_text(struct outbuf *o, const struct model *m, const struct heap *h,
			struct block_names *bn, uint32_t node)
{
	const char *name;

	type_key(m, h, bn, heap_obj(h, node), &name);
	outbuf_printf(o, "%s@0x%" PRIx64, name, heap_obj_addr(h, heap_obj(h, node)));
}

/* root -> ... -> node, by the breadth-first parents: a shortest path; each
 * step says where in the object before it the pointer is. A long one
 * shows its ends. */
static void path_text(struct outbuf *o, const struct model *m, const struct heap *h,
		      struct block_names *bn, uint32_t node)
{
	uint32_t *path = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t v = node; v && v != HEAP_NONE && n < h->nr_nodes; v = h->parent[v]) {
		path = grow_array(path, &cap, n + 1, sizeof(*path));
		path[n++] = v;
	}
	outbuf_str(o, "        ");
	if (n < 2 || path[n - 1] > h->nr_roots) {
		outbuf_str(o, "(no path)\n");
		free(path);
		return;
	}
	/* path[n - 1] is the root, path[0] the node */
	root_text(o, m, &h->roots[path[n - 1] - 1], h->parent_off[path[n - 2]]);
	for (size_t i = n - 1; i-- > 0;) {
		if (n - 1 - i > PATH_MAX_SHOWN / 2 && i > PATH_MAX_SHOWN / 2) {
			if (n - 1 - i == PATH_MAX_SHOWN / 2 + 1)
				outbuf_printf(o, " -> ... %zu more", i - PATH_MAX_SHOWN / 2);
			continue;
		}
		outbuf_str(o, " -> ");
		if (i + 2 < n)
			outbuf_printf(o, "(+%" PRIu32 ") ", h->parent_off[path[i]]);
		object_text(o, m, h, bn, path[i]);
	}
	outbuf_char(o, '\n');
	free(path);
}

static int by_node_retained(const void *a, const void *b, void *arg)
{
	const struct heap *h = arg;
	uint64_t x = h->retained[*(const uint32_t *)a], y = h->retained[*(const uint32_t *)b];

	return x < y ? 1 : x > y ? -1 : 0;
}

/* What the roots were: the snapshot says which regions the collector
 * scans, and a user checking for a missed root starts here. */
static void roots_by_kind(struct outbuf *o, const struct trace *t)
{
	static const char *const names[] = {
		[ALYS_ROOT_DATA] = "data", [ALYS_ROOT_STACK] = "stack",
		[ALYS_ROOT_REGISTERS] = "registers", [ALYS_ROOT_FIBER] = "fiber",
		[ALYS_ROOT_REGISTERED] = "registered",
	};
	uint64_t n[sizeof(names) / sizeof(names[0])] = { 0 };
	const char *sep = "";

	for (size_t i = 0; i < t->snapshot.nr_roots; i++) {
		uint32_t k = t->roots[t->snapshot.first_root + i].kind;

		if (k < sizeof(names) / sizeof(names[0]) && names[k])
			n[k]++;
	}
	outbuf_printf(o, "Roots by kind:");
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (names[k]) {
			outbuf_printf(o, "%s %s %" PRIu64, sep, names[k], n[k]);
			sep = ",";
		}
	outbuf_printf(o, "\n");
}

void write_heap(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	const struct trace *t = m->t;
	const struct trace_snapshot *s = &t->snapshot;
	struct rows r = { 0 };
	struct block_names bn;
	struct heap h;
	uint32_t *top;
	size_t ntop = 0;

	(void)opt;
	if (heap_build(&h, t)) {
		outbuf_printf(o, "No heap snapshot in this trace: take one with alys-bpf "
			      "--heap-snapshot --pid PID.\n");
		return;
	}
	str_table_init(&bn.names);
	u64_table_init(&r.by_key);
	type_rows(m, &h, &bn, &r);
	if (r.n > 1)
		qsort(r.v, r.n, sizeof(*r.v), by_retained);
	outbuf_printf(o, "Heap snapshot of pid %" PRIu64 " (%s): stopped %.1f ms; %" PRIu64
		      " blocks, %zu roots\n", t->hdr.pid, t->hdr.exe.ptr ? t->hdr.exe.ptr : "?",
		      s->stop_ns / 1e6, s->blocks, s->nr_roots);
	roots_by_kind(o, t);
	outbuf_printf(o, "Reachable from the roots: %" PRIu64 " objects, %" PRIu64 " bytes (the heap "
		      "holds %" PRIu64 " slots, %" PRIu64 " bytes); interior pointers %s\n",
		      h.reached_objs, h.reached_bytes, h.heap_objs, h.heap_bytes,
		      s->all_interior_pointers ? "recognized" : "not recognized");
	outbuf_printf(o, "\n%-40s %12s %14s %16s\n", "type", "objects", "bytes", "retained_bytes");
	for (size_t i = 0; i < r.n && i < TOP_TYPES; i++)
		outbuf_printf(o, "%-40s %12" PRIu64 " %14" PRIu64 " %16" PRIu64 "\n", r.v[i].name,
			      r.v[i].objects, r.v[i].bytes, r.v[i].retained);
	top = xcalloc(h.nr_reached ? h.nr_reached : 1, sizeof(*top));
	for (uint32_t i = 0; i < h.nr_reached; i++)
		if (heap_is_object(&h, h.rpo[i]))
			top[ntop++] = h.rpo[i];
	qsort_r(top, ntop, sizeof(*top), by_node_retained, &h);
	outbuf_printf(o, "\nTop retaining objects, each with its shortest path from a root:\n");
	for (size_t i = 0; i < ntop && i < TOP_OBJECTS; i++) {
		outbuf_printf(o, "%4zu  %14" PRIu64 " bytes retained  ", i + 1, h.retained[top[i]]);
		object_text(o, m, &h, &bn, top[i]);
		outbuf_char(o, '\n');
		path_text(o, m, &h, &bn, top[i]);
	}
	free(top);
	free(r.v);
	u64_table_free(&r.by_key);
	str_table_free(&bn.names);
	heap_free(&h);
}

#define MERMAID_WRAP_PX "400"

/* A mermaid label: quotes and angle brackets as entities, no control bytes. */
static void mermaid_text(struct outbuf *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '"')
			outbuf_str(o, "#quot;");
		else if (*s == '<')
			outbuf_str(o, "#lt;");
		else if (*s == '>')
			outbuf_str(o, "#gt;");
		else
			outbuf_char(o, (unsigned char)*s < 0x20 ? '?' : *s);
	}
}

static void mermaid_node(struct outbuf *o, const struct model *m, const struct heap *h,
			 struct block_names *bn,
			 uint32_t node, uint32_t off, struct u64_table *drawn)
{
	struct outbuf label;
	uint64_t key = node <= h->nr_roots ? ((uint64_t)node << 32 | off) + 1
					   : ((uint64_t)1 << 63 | node);

	if (node <= h->nr_roots)
		outbuf_printf(o, "r%" PRIu32 "_%" PRIu32, node, off);
	else
		outbuf_printf(o, "n%" PRIu32, node);
	if (u64_table_get(drawn, key))
		return;
	u64_table_put(drawn, key, 1, 0);
	outbuf_init(&label, -1);
	if (node <= h->nr_roots)
		root_text(&label, m, &h->roots[node - 1], off);
	else
		object_text(&label, m, h, bn, node);
	outbuf_char(&label, '\0');
	outbuf_str(o, node <= h->nr_roots ? "([\"" : "[\"");
	mermaid_text(o, label.buf);
	outbuf_str(o, node <= h->nr_roots ? "\"])" : "\"]");
	outbuf_release(&label);
}

/*
 * The shortest paths from roots to the objects of --type that retain the
 * most (--limit of them), each cut at --depth steps from the object: one
 * flowchart, shared steps drawn once, each edge labelled with the offset
 * of the pointer in the object it leaves.
 */
void write_heap_graph(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	uint32_t limit = opt->limit ? opt->limit : 10, depth = opt->depth ? opt->depth : 32;
	struct u64_table drawn, edges;
	uint32_t *sel;
	size_t nsel = 0, total = 0;
	struct block_names bn;
	struct heap h;

	if (heap_build(&h, m->t)) {
		outbuf_printf(o, "%%%% No heap snapshot in this trace: take one with alys-bpf "
			      "--heap-snapshot --pid PID.\n");
		return;
	}
	str_table_init(&bn.names);
	sel = xcalloc(h.nr_reached ? h.nr_reached : 1, sizeof(*sel));
	for (uint32_t i = 0; i < h.nr_reached; i++) {
		const char *name;

		if (!heap_is_object(&h, h.rpo[i]))
			continue;
		type_key(m, &h, &bn, heap_obj(&h, h.rpo[i]), &name);
		if (!strcmp(name, m->filter.type))
			sel[nsel++] = h.rpo[i];
	}
	total = nsel;
	qsort_r(sel, nsel, sizeof(*sel), by_node_retained, &h);
	if (nsel > limit)
		nsel = limit;
	u64_table_init(&drawn);
	u64_table_init(&edges);
	/* mermaid wraps a label wider than 200 px by default: a root's name
	 * ("fiber 0x… stack +432 at app.cr:51 in start (proc at app.cr:49)")
	 * took five lines */
	outbuf_str(o, "---\nconfig:\n  flowchart:\n    wrappingWidth: " MERMAID_WRAP_PX "\n---\n");
	outbuf_str(o, "%% alys_converter -f heap-graph: paths from roots to ");
	outbuf_printf(o, "%zu of the %zu reachable objects of ", nsel, total);
	mermaid_text(o, m->filter.type);
	outbuf_printf(o, "\nflowchart LR\n");
	for (size_t k = 0; k < nsel; k++) {
		uint32_t v = sel[k], steps = 0;

		for (; v > h.nr_roots && h.parent[v] != HEAP_NONE; v = h.parent[v], steps++) {
			uint32_t p = h.parent[v];
			uint64_t key = ((uint64_t)p << 32 | v) + 1;

			if (steps == depth) {
				outbuf_printf(o, "  cut%" PRIu32 "[\"...\"] --> ", v);
				mermaid_node(o, m, &h, &bn, v, 0, &drawn);
				outbuf_char(o, '\n');
				break;
			}
			if (u64_table_get(&edges, key))
				break;	/* the rest of this path is drawn */
			u64_table_put(&edges, key, 1, 0);
			outbuf_str(o, "  ");
			if (p <= h.nr_roots) {
				mermaid_node(o, m, &h, &bn, p, h.parent_off[v], &drawn);
				outbuf_str(o, " --> ");
			} else {
				mermaid_node(o, m, &h, &bn, p, 0, &drawn);
				outbuf_printf(o, " -->|+%" PRIu32 "| ", h.parent_off[v]);
			}
			mermaid_node(o, m, &h, &bn, v, 0, &drawn);
			outbuf_char(o, '\n');
		}
	}
	if (!nsel)
		outbuf_str(o, "  none[\"no reachable object of this type\"]\n");
	u64_table_free(&drawn);
	u64_table_free(&edges);
	free(sel);
	str_table_free(&bn.names);
	heap_free(&h);
}
