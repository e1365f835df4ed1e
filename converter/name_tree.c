// SPDX-License-Identifier: MIT
#include "converter/name_tree.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

static uint32_t add_node(struct name_tree *t, const char *name, uint32_t parent)
{
	t->n = grow_array(t->n, &t->cap, t->nr + 1, sizeof(*t->n));
	t->n[t->nr] = (struct name_node){
		.name = name, .parent = parent,
		.depth = t->nr ? t->n[parent].depth + 1 : 0,
	};
	if (t->n[t->nr].depth > t->max_depth)
		t->max_depth = t->n[t->nr].depth;
	return (uint32_t)t->nr++;
}

void name_tree_init(struct name_tree *t, const char *root, name_clean_fn *clean)
{
	memset(t, 0, sizeof(*t));
	t->clean = clean;
	str_table_init(&t->names);
	u64_table_init(&t->name_of);
	u64_table_init(&t->kids);
	outbuf_init(&t->scratch, -1);
	add_node(t, root, 0);
}

void name_tree_free(struct name_tree *t)
{
	free(t->n);
	str_table_free(&t->names);
	u64_table_free(&t->name_of);
	u64_table_free(&t->kids);
	outbuf_release(&t->scratch);
	free(t->of_node[0]);
	free(t->of_node[1]);
	free(t->chain);
	memset(t, 0, sizeof(*t));
}

/* Frames of one address share their name's storage: intern by pointer
 * once, by text after that. */
static uint32_t name_id(struct name_tree *t, const char *name)
{
	const struct u64_slot *sl = u64_table_get(&t->name_of, (uint64_t)(uintptr_t)name);
	uint32_t id;

	if (sl)
		return sl->b;
	if (t->clean) {
		t->scratch.len = 0;
		t->clean(&t->scratch, name);
		outbuf_char(&t->scratch, '\0');
		id = str_table_intern(&t->names, t->scratch.buf);
	} else {
		id = str_table_intern(&t->names, name);
	}
	u64_table_put(&t->name_of, (uint64_t)(uintptr_t)name, 0, id);
	return id;
}

static uint32_t child(struct name_tree *t, uint32_t parent, uint32_t name)
{
	uint64_t key = ((uint64_t)parent << 32 | name) + 1;
	const struct u64_slot *sl = u64_table_get(&t->kids, key);
	uint32_t c;

	if (sl)
		return sl->b;
	c = add_node(t, str_table_get(&t->names, name), parent);
	t->n[c].next_sibling = t->n[parent].first_child;
	t->n[parent].first_child = c;
	u64_table_put(&t->kids, key, 0, c);
	return c;
}

/* The frames of one address, outermost first, under at. */
static uint32_t add_address(struct name_tree *t, struct model *m, uint32_t at, uint64_t ip,
			    uint32_t depth, uint32_t skip)
{
	const struct sym_entry *e = symbolizer_entry(m->sym, symbolizer_resolve(m->sym, ip, depth));

	for (uint32_t k = e->nr_frames; k-- > skip;)
		at = child(t, at, name_id(t, e->frames[k].name));
	return at;
}

/* The tree node of trace node nd's frames from the root, nd a caller. */
static uint32_t caller_path(struct name_tree *t, struct model *m, uint32_t nd, bool truncated)
{
	const struct trace *tr = m->t;
	uint32_t *of = t->of_node[truncated];
	uint32_t n = 0, at;

	for (; nd && !of[nd - 1]; nd = tr->nodes[nd - 1].parent)
		t->chain[n++] = nd;
	at = nd ? of[nd - 1] : truncated ? child(t, 0, name_id(t, "[truncated]")) : 0;
	while (n--) {
		nd = t->chain[n];
		/* depth 1: any frame but the probed one is a return address */
		at = add_address(t, m, at, tr->nodes[nd - 1].ip, 1, 0);
		of[nd - 1] = at;
	}
	return at;
}

void name_tree_add(struct name_tree *t, struct model *m, size_t b, uint64_t v)
{
	const struct trace *tr = m->t;
	const struct sym_frame **frames;
	uint32_t at = 0;
	size_t n;

	/* A whole recorded stack: its callers' path is known once per node.
	 * (--depth keeps the innermost frames: no shared root there.) */
	if (!m->depth && b <= tr->nr_stacks && tr->stacks[b - 1].leaf) {
		const struct trace_stack *st = &tr->stacks[b - 1];
		const struct trace_node *leaf = &tr->nodes[st->leaf - 1];
		bool truncated = model_truncated(m, b);
		uint32_t skip, first = model_first_kept(m, st, 0, &skip);

		if (!t->of_node[truncated])
			t->of_node[truncated] = xcalloc(tr->nr_nodes, sizeof(uint32_t));
		if (!t->chain)
			t->chain = xcalloc(TRACE_MAX_FRAMES + 1, sizeof(uint32_t));
		for (uint32_t i = 0; i < first; i++)
			leaf = &tr->nodes[leaf->parent - 1];
		at = caller_path(t, m, leaf->parent, truncated);
		at = add_address(t, m, at, leaf->ip, first, skip);
		t->n[at].own += v;
		return;
	}
	n = model_frames(m, b, &frames);
	for (size_t i = n; i-- > 0;)
		at = child(t, at, name_id(t, frames[i]->name));
	t->n[at].own += v;
}

void name_tree_sum(struct name_tree *t)
{
	for (size_t i = 0; i < t->nr; i++)
		t->n[i].value = t->n[i].own;
	/* a child comes after its parent */
	for (size_t i = t->nr; i-- > 1;)
		t->n[t->n[i].parent].value += t->n[i].value;
}

static int by_name(const void *a, const void *b, void *arg)
{
	const struct name_tree *t = arg;

	return strcmp(t->n[*(const uint32_t *)a].name, t->n[*(const uint32_t *)b].name);
}

void name_tree_sort(struct name_tree *t)
{
	uint32_t *kids = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < t->nr; i++) {
		size_t k = 0;

		for (uint32_t c = t->n[i].first_child; c; c = t->n[c].next_sibling) {
			kids = grow_array(kids, &cap, k + 1, sizeof(*kids));
			kids[k++] = c;
		}
		if (k < 2)
			continue;
		qsort_r(kids, k, sizeof(*kids), by_name, t);
		t->n[i].first_child = kids[0];
		for (size_t j = 0; j < k; j++)
			t->n[kids[j]].next_sibling = j + 1 < k ? kids[j + 1] : 0;
	}
	free(kids);
}
