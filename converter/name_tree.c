// SPDX-License-Identifier: MIT
#include "name_tree.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint32_t add_node(struct name_tree *t, const char *name)
{
	t->n = grow_array(t->n, &t->cap, t->nr + 1, sizeof(*t->n));
	t->n[t->nr] = (struct name_node){ .name = name };
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
	add_node(t, root);
}

void name_tree_free(struct name_tree *t)
{
	free(t->n);
	str_table_free(&t->names);
	u64_table_free(&t->name_of);
	u64_table_free(&t->kids);
	outbuf_release(&t->scratch);
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
	c = add_node(t, str_table_get(&t->names, name));
	t->n[c].next_sibling = t->n[parent].first_child;
	t->n[parent].first_child = c;
	u64_table_put(&t->kids, key, 0, c);
	return c;
}

void name_tree_add(struct name_tree *t, const struct sym_frame *const *frames, size_t n,
		   uint64_t v)
{
	uint32_t at = 0;

	t->n[0].value += v;
	for (size_t i = n; i-- > 0;) {
		at = child(t, at, name_id(t, frames[i]->name));
		t->n[at].value += v;
	}
	t->n[at].own += v;
	if (n > t->max_depth)
		t->max_depth = (uint32_t)n;
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
