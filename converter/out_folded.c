// SPDX-License-Identifier: MIT
/*
 * Folded stacks, the input of flamegraph.pl, inferno and speedscope: one line
 * per distinct stack, frames from the root to the GC function joined by ';',
 * then a space and the value. Stacks that differ only in return addresses
 * inside the same functions fold into one line. Inlined calls are frames of
 * their own, as in a debugger's backtrace.
 */
#include <stdlib.h>
#include <string.h>

#include "converter/name_tree.h"
#include "converter/output.h"
#include "lib/util.h"

/* ';' separates frames and a newline ends the line: neither may appear
 * inside a name. */
static void clean_name(struct outbuf *mem, const char *name)
{
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (c == ';')
			c = ':';
		else if ((unsigned char)c < 0x20 || c == 0x7f)
			c = '?';
		outbuf_char(mem, c);
	}
}

/*
 * The lines come out in strcmp order of their text, as sorting the texts
 * would give, without making them: under a node, a child's own line
 * ("...;name") and its subtree's lines ("...;name;...") are two items,
 * ordered as their text would be by the name followed by NUL or ';'.
 */
struct item {
	const char *name;
	uint32_t node;
	char term;			/* '\0': the node's own line; ';': its children */
};

static int by_text(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	for (size_t i = 0;; i++) {
		unsigned char cx = x->name[i] ? (unsigned char)x->name[i] : (unsigned char)x->term;
		unsigned char cy = y->name[i] ? (unsigned char)y->name[i] : (unsigned char)y->term;

		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (!x->name[i] || !y->name[i])
			return 0;
	}
}

/* A level of the walk: its items, sorted, and the next one to emit. */
struct level {
	size_t first, nr, next;
	size_t path_len;		/* of the path text down to this level */
};

void write_folded(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	bool bytes = opt->value != VALUE_COUNT;	/* bytes by default, as pprof */
	struct name_tree tree;
	struct item *items = NULL;
	struct level *levels = NULL;
	size_t nr_items = 0, cap_items = 0, nr_levels = 0, cap_levels = 0;
	struct outbuf path;

	name_tree_init(&tree, "", clean_name);
	for (size_t b = 1; b < m->nr_buckets; b++) {
		const struct alloc_stats *st = &m->buckets[b].s;

		if (!st->alloc_objects || st->alloc_space < opt->min_bytes)
			continue;
		name_tree_add(&tree, m, b, bytes ? st->alloc_space : st->alloc_objects);
	}

	/* depth first; items pushed per level on one stack of items */
	outbuf_init(&path, -1);
	for (uint32_t node = 0;;) {
		struct level *lv;

		levels = grow_array(levels, &cap_levels, nr_levels + 1, sizeof(*levels));
		lv = &levels[nr_levels++];
		lv->first = nr_items;
		lv->path_len = path.len;
		for (uint32_t c = tree.n[node].first_child; c; c = tree.n[c].next_sibling) {
			items = grow_array(items, &cap_items, nr_items + 2, sizeof(*items));
			if (tree.n[c].own)
				items[nr_items++] = (struct item){ tree.n[c].name, c, '\0' };
			if (tree.n[c].first_child)
				items[nr_items++] = (struct item){ tree.n[c].name, c, ';' };
		}
		lv->nr = nr_items - lv->first;
		lv->next = 0;
		if (lv->nr > 1)
			qsort(items + lv->first, lv->nr, sizeof(*items), by_text);

		/* the next item to descend into, emitting own lines on the way */
		node = 0;
		while (nr_levels && !node) {
			struct item *it;

			lv = &levels[nr_levels - 1];
			if (lv->next == lv->nr) {
				nr_items = lv->first;
				nr_levels--;
				continue;
			}
			it = &items[lv->first + lv->next++];
			path.len = lv->path_len;
			if (nr_levels > 1)
				outbuf_char(&path, ';');
			outbuf_str(&path, it->name);
			if (it->term == ';') {
				node = it->node;
				continue;
			}
			outbuf_write(o, path.buf, path.len);
			outbuf_char(o, ' ');
			outbuf_u64(o, tree.n[it->node].own);
			outbuf_char(o, '\n');
		}
		if (!node)
			break;
	}
	outbuf_release(&path);
	free(items);
	free(levels);
	name_tree_free(&tree);
}
