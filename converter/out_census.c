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
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "model.h"
#include "type_ids.h"
#include "util.h"

static int by_bytes(const void *a, const void *b)
{
	const struct trace_census_type *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->type_id < y->type_id ? -1 : x->type_id > y->type_id;
}

/* The last allocation of each example address before a census, by its
 * stack (the model's): an object of a type, or a Pointer(X) buffer. */
struct examples {
	const struct model *m;
	uint64_t before;		/* events with ids up to this one */
	struct u64_table at;		/* addr -> 0: none; 1: no stack; 2 + bucket */
};

static void find_example(void *ctx, const struct trace_event *e)
{
	struct examples *x = ctx;
	struct u64_slot *sl;

	if (e->id > x->before || e->kind == ALYS_KIND_FREE ||
	    !(sl = u64_table_get(&x->at, e->addr)))
		return;
	sl->a = e->stack ? 2 + model_bucket_of(x->m, e) : 1;
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
	struct trace_census_type *v;
	const struct type_ids *ti = &m->code_types;
	uint64_t objs = 0, bytes = 0;
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
	v = malloc((last->nr_types ? last->nr_types : 1) * sizeof(*v));
	if (!v)
		return;
	memcpy(v, &t->census_types[last->first_type], last->nr_types * sizeof(*v));
	qsort(v, last->nr_types, sizeof(*v), by_bytes);
	u64_table_init(&x.at);
	for (size_t k = 0; k < last->nr_types; k++)
		u64_table_put(&x.at, v[k].example, 0, 0);
	if (trace_each_event(t, find_example, &x))
		exit(1);
	outbuf_printf(o, "\nLast census, after collection %" PRIu32 ", by bytes:\n", last->gc_no);
	outbuf_printf(o, "%10s %12s %14s  %-40s  %s\n", "type_id", "objects", "bytes", "type",
		      "allocated as");
	for (size_t k = 0; k < last->nr_types; k++) {
		const char *name = type_ids_name(ti, v[k].type_id);
		const char *example = example_name(&x, v[k].example);

		objs += v[k].objects;
		bytes += v[k].bytes;
		outbuf_printf(o, "%10" PRIu32 " %12" PRIu64 " %14" PRIu64 "  %-40s  %s\n",
			      v[k].type_id, v[k].objects, v[k].bytes, name ? name : "-",
			      example ? example : "-");
	}
	outbuf_printf(o, "%10s %12" PRIu64 " %14" PRIu64 "\n", "total", objs, bytes);
	outbuf_printf(o, "(types named from the program's code: %zu of %zu allocation calls "
		      "store a type id, %zu ids named)\n", ti->stores, ti->allocations, ti->named);
	u64_table_free(&x.at);
	free(v);
}
