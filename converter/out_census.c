// SPDX-License-Identifier: MIT
/*
 * -f census: live objects and bytes by Crystal type id from the heap walks
 * of `alys-bpf --census` (FORMAT.md record 8). One summary line per census,
 * then the last census by type. A type id is named from the program's code
 * (type_ids.h: the constant each constructor stores), with no allocation
 * probe. When the trace also recorded the allocation of the id's example
 * object (--census --sample ...; the daemon prefers a sampled object as
 * example), the type its stack constructs is shown beside it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/output.h"
#include "profile/model.h"
#include "profile/type_ids.h"
#include "lib/util.h"

#define NO_TYPE_ID "(no type id)"

/*
 * A row of the last census: one type id named from the program's code, or
 * the objects whose first word is no type id the code stores (buffers:
 * their first word is data), grouped by what their examples' allocations
 * say they are ("Hash(String, Int32) buffer"; the site rule's name).
 */
struct census_row {
	bool typed;
	uint32_t type_id;
	uint64_t objects, bytes;
	const char *name;	/* typed: the code's name; untyped: the example's */
	const char *example;	/* what the example was allocated as, or NULL */
};

static int by_bytes(const void *a, const void *b)
{
	const struct census_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->typed != y->typed)
		return x->typed ? -1 : 1;
	if (x->typed)
		return x->type_id < y->type_id ? -1 : x->type_id > y->type_id;
	return strcmp(x->name, y->name);
}

/* The last allocation of each example address before a census, by its
 * stack (the model's): an object of a type, or a Pointer(X) buffer. */
struct examples {
	const struct model *m;
	uint64_t before;		/* events with ids up to this one */
	struct u64_table at;		/* addr -> 0: none; 1: no stack; 2 + bucket */
	bool any_recorded;		/* some example's allocation is in the trace */
};

static void find_example(void *ctx, const struct trace_event *e)
{
	struct examples *x = ctx;
	struct u64_slot *sl;

	if (e->id > x->before || e->kind == ALYS_KIND_FREE ||
	    !(sl = u64_table_get(&x->at, e->addr)))
		return;
	sl->a = e->stack ? 2 + model_bucket_of(x->m, e) : 1;
	x->any_recorded = true;
}

/* NULL if unknown or not recorded. */
static const char *example_name(const struct examples *x, uint64_t addr)
{
	uint64_t b = u64_table_get_a(&x->at, addr);

	if (b < 2)
		return NULL;
	return model_block_type(x->m, b - 2)[0] ? model_block_type(x->m, b - 2) : NULL;
}

void write_census(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	const struct trace *t = m->t;
	const struct trace_census *last;
	struct census_row *rows;
	size_t nr_rows = 0;
	const struct type_ids *ti = &m->code_types;
	uint64_t objs = 0, bytes = 0, untyped = 0;
	struct examples x = { .m = m };

	(void)opt;
	if (!t->nr_censuses) {
		outbuf_printf(o, "No heap census in this trace: record one with alys-bpf --census.\n");
		return;
	}
	outbuf_printf(o, "Heap censuses (live objects by type id after a collection)\n");
	outbuf_printf(o, "%8s %12s %14s %6s %8s %10s\n", "gc_no", "objects", "bytes", "types",
		      "blocks", "walk ms");
	for (size_t i = 0; i < t->nr_censuses; i++) {
		const struct trace_census *c = &t->censuses[i];
		uint64_t n = 0, b = 0;

		for (size_t k = 0; k < c->nr_types; k++) {
			n += t->census_types[c->first_type + k].objects;
			b += t->census_types[c->first_type + k].bytes;
		}
		outbuf_printf(o, "%8" PRIu32 " %12" PRIu64 " %14" PRIu64 " %6zu %8" PRIu64 " %10.2f%s\n",
			      c->gc_no, n, b, c->nr_types, c->blocks, c->walk_ns / 1e6,
			      c->unreadable ? " (some blocks unreadable)" : "");
	}
	last = &t->censuses[t->nr_censuses - 1];
	x.before = last->first_event;
	u64_table_init(&x.at);
	for (size_t k = 0; k < last->nr_types; k++)
		u64_table_put(&x.at, t->census_types[last->first_type + k].example, 0, 0);
	if (trace_each_event(t, find_example, &x))
		exit(1);
	rows = xmalloc((last->nr_types ? last->nr_types : 1) * sizeof(*rows));
	for (size_t k = 0; k < last->nr_types; k++) {
		const struct trace_census_type *c = &t->census_types[last->first_type + k];
		const char *name = type_ids_name(ti, c->type_id);
		const char *example = example_name(&x, c->example);
		struct census_row *r = NULL;
		bool typed = name;

		if (!typed) {
			name = example ? example : NO_TYPE_ID;
			for (size_t j = 0; j < nr_rows && !r; j++)
				if (!rows[j].typed && !strcmp(rows[j].name, name))
					r = &rows[j];
		}
		if (!r) {
			r = &rows[nr_rows++];
			*r = (struct census_row){ .typed = typed,
						  .type_id = c->type_id, .name = name,
						  .example = example };
		}
		r->objects += c->objects;
		r->bytes += c->bytes;
	}
	qsort(rows, nr_rows, sizeof(*rows), by_bytes);
	outbuf_printf(o, "\nLast census, after collection %" PRIu32 ", by bytes:\n", last->gc_no);
	outbuf_printf(o, "%10s %12s %14s  %-40s  %s\n", "type_id", "objects", "bytes", "type",
		      "allocated as");
	for (size_t k = 0; k < nr_rows; k++) {
		const struct census_row *r = &rows[k];
		char id[16];

		objs += r->objects;
		bytes += r->bytes;
		snprintf(id, sizeof(id), "%" PRIu32, r->type_id);
		outbuf_printf(o, "%10s %12" PRIu64 " %14" PRIu64 "  %-40s  %s\n",
			      r->typed ? id : "-", r->objects, r->bytes, r->name,
			      r->example ? r->example : "-");
		if (!r->typed)
			untyped += r->bytes;
	}
	outbuf_printf(o, "%10s %12" PRIu64 " %14" PRIu64 "\n", "total", objs, bytes);
	outbuf_printf(o, "(types named from the program's code: %zu of %zu allocation calls "
		      "store a type id, %zu ids named)\n", ti->stores, ti->allocations, ti->named);
	if (untyped)
		outbuf_printf(o, "(%.1f%% of the bytes have no type id in their first word: type_id -, "
			      "named by how blocks of the same first word were allocated%s)\n",
			      100.0 * (double)untyped / (double)(bytes ? bytes : 1),
			      x.any_recorded ? "" : "; record allocations with --sample to name them");
	u64_table_free(&x.at);
	free(rows);
}
