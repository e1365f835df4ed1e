/* SPDX-License-Identifier: MIT */
/*
 * Stacks merged by frame name into one tree, root first: the flamegraph's
 * boxes and the folded-stacks lines. Its size grows with distinct paths of
 * names, never with the text of the stacks (a compiler-sized trace has a
 * million stacks of a hundred frames: 2 GB as text, a few million nodes
 * here). Children are found through a hash table, so wide nodes cost no
 * more than narrow ones.
 */
#ifndef ALYS_CONV_NAME_TREE_H
#define ALYS_CONV_NAME_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/model.h"
#include "profile/outbuf.h"
#include "lib/str_table.h"
#include "profile/symbolize.h"
#include "lib/u64_table.h"

struct name_node {
	const char *name;
	uint64_t value;			/* of the stacks through it (name_tree_sum) */
	uint64_t own;			/* of the stacks ending at it */
	uint32_t parent, depth;
	uint32_t first_child, next_sibling;	/* indexes; 0: none */
};

/* How a frame's name is written into the tree: appended to out, e.g. with
 * the characters a format reserves replaced. */
typedef void name_clean_fn(struct outbuf *out, const char *name);

struct name_tree {
	struct name_node *n;		/* n[0]: the root */
	size_t nr, cap;
	uint32_t max_depth;		/* frames of the deepest stack added */
	name_clean_fn *clean;		/* NULL: names as they are */
	struct outbuf scratch;
	struct str_table names;
	struct u64_table name_of;	/* frame name pointer -> name id */
	struct u64_table kids;		/* parent << 32 | name id -> child */
	/* per trace stack node, the tree node of the frames from the root
	 * to it as a caller (0: not known yet), without and with a
	 * "[truncated]" root: a stack costs its leaf, not its depth */
	uint32_t *of_node[2];
	uint32_t *chain;		/* scratch: trace nodes to extend */
};

void name_tree_init(struct name_tree *t, const char *root, name_clean_fn *clean);
void name_tree_free(struct name_tree *t);

/* Adds bucket b's stack, as model_frames names it, worth v. */
void name_tree_add(struct name_tree *t, struct model *m, size_t b, uint64_t v);

/* Each node's value: its own and its descendants'. */
void name_tree_sum(struct name_tree *t);

/* Every child list in strcmp order of the names. */
void name_tree_sort(struct name_tree *t);

#endif /* ALYS_CONV_NAME_TREE_H */
