// SPDX-License-Identifier: MIT
#include "gc/fiber_list.h"

#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "base/maps_file.h"
#include "gc/heap_walk.h"
#include "lib/elf_file.h"
#include "lib/u64_table.h"

#define OBJ_READ 512		/* bytes read of each node: a Fiber is ~150-300 */
#define MAX_NODES (1u << 22)
#define MAX_NEXT_OFF 256

/* The nodes read so far, by address. */
struct nodes {
	pid_t pid;
	struct u64_table at;	/* address -> index + 1 */
	struct node { uint64_t addr; uint32_t len; uint64_t w[OBJ_READ / 8]; } *v;
	size_t n, cap;
};

/* Word off of the node at addr, or false when it cannot be read there. */
static bool word(struct nodes *ns, uint64_t addr, uint32_t off, uint64_t *out)
{
	const struct u64_slot *sl;
	struct node *nd;

	if (!addr || (addr & 7))
		return false;
	sl = u64_table_get(&ns->at, addr);
	if (sl) {
		nd = &ns->v[sl->a - 1];
	} else {
		/* never past the page: the next one may not be mapped */
		uint32_t len = 4096 - (uint32_t)(addr & 4095);

		if (len > OBJ_READ)
			len = OBJ_READ;
		if (ns->n == ns->cap) {
			size_t cap = ns->cap ? 2 * ns->cap : 64;
			struct node *v = realloc(ns->v, cap * sizeof(*v));

			if (!v)
				return false;
			ns->v = v;
			ns->cap = cap;
		}
		nd = &ns->v[ns->n];
		nd->addr = addr;
		nd->len = heap_peek(ns->pid, addr, nd->w, len) ? 0 : len;
		u64_table_put(&ns->at, addr, ++ns->n, 0);
	}
	if (off + 8 > nd->len)
		return false;
	*out = nd->w[off / 8];
	return true;
}

/* Whether head..tail is a list through @next at next and @previous right
 * after it; its length in *len. */
static bool walks(struct nodes *ns, uint64_t head, uint64_t tail, uint32_t next, size_t *len)
{
	uint64_t x = head, prev = 0, nx, pv;

	for (size_t k = 0; k < MAX_NODES; k++) {
		if (!word(ns, x, next, &nx) || !word(ns, x, next + 8, &pv) || pv != prev)
			return false;
		if (x == tail) {
			*len = k + 1;
			return nx == 0;
		}
		prev = x;
		x = nx;
	}
	return false;
}

struct fit {
	uint64_t head;
	uint32_t next;
	size_t len;
};

/* Whether two fits name the same fibers in the same order. */
static bool same_fibers(struct nodes *ns, const struct fit *a, const struct fit *b)
{
	uint64_t x = a->head, y = b->head;

	if (a->head != b->head || a->len != b->len)
		return false;
	for (size_t k = 1; k < a->len; k++)
		if (!word(ns, x, a->next, &x) || !word(ns, y, b->next, &y) || x != y)
			return false;
	return true;
}

int fiber_list_read(pid_t pid, uint64_t list_var, const struct fiber_layout *fl,
		    struct fiber_entry **out, size_t *n, char *why, size_t whylen)
{
	struct nodes ns = { .pid = pid };
	struct fit fit = { 0 };
	uint64_t list, lw[8];
	size_t fits = 0;
	int ret = -1;

	*out = NULL;
	*n = 0;
	if (heap_peek(pid, list_var, &list, 8)) {
		snprintf(why, whylen, "cannot read Fiber::fibers at 0x%llx", (unsigned long long)list_var);
		return -1;
	}
	if (!list)
		return 0;	/* no fiber list made yet */
	if (heap_peek(pid, list, lw, sizeof(lw))) {
		snprintf(why, whylen, "cannot read the fiber list at 0x%llx", (unsigned long long)list);
		return -1;
	}
	u64_table_init(&ns.at);
	/* word 0 holds the type id; @mutex comes first, then @head, @tail */
	for (uint32_t h = 1; h + 1 < 8; h++) {
		if (!lw[h] || !lw[h + 1] || (lw[h] & 7) || (lw[h + 1] & 7))
			continue;
		for (uint32_t next = 8; next < MAX_NEXT_OFF; next += 8) {
			struct fit f = { .head = lw[h], .next = next };

			if (!walks(&ns, lw[h], lw[h + 1], next, &f.len))
				continue;
			if (fits++ && !same_fibers(&ns, &fit, &f)) {
				snprintf(why, whylen, "the fiber list at 0x%llx reads as a list in "
					 "more than one way", (unsigned long long)list);
				goto out;
			}
			fit = f;
		}
	}
	if (!fits) {
		snprintf(why, whylen, "the fiber list at 0x%llx is not a doubly linked list "
			 "(not a Crystal runtime this reads)", (unsigned long long)list);
		goto out;
	}
	*out = calloc(fit.len, sizeof(**out));
	if (!*out) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	for (uint64_t x = fit.head; *n < fit.len; (void)word(&ns, x, fit.next, &x)) {
		struct fiber_entry *f = &(*out)[(*n)++];
		uint64_t resumable = 0;

		f->fiber = x;
		/* Fiber::Context: stack_top, then resumable (1: suspended) */
		if (!word(&ns, x, fl->stack_top_off, &f->top) ||
		    !word(&ns, x, fl->stack_bottom_off, &f->bottom) ||
		    !word(&ns, x, fl->stack_top_off + 8, &resumable))
			f->top = f->bottom = 0;
		f->suspended = resumable == 1;
	}
	ret = 0;
out:
	u64_table_free(&ns.at);
	free(ns.v);
	return ret;
}

struct exe_bias {
	struct stat want;
	Elf *elf;
	uint64_t bias;
};

/* 1 (stop) at a mapping of the executable, with its load bias. */
static int exe_mapping(const struct maps_line *l, void *arg)
{
	struct exe_bias *eb = arg;
	struct stat st;

	if (!l->file || stat(l->file, &st) || st.st_ino != eb->want.st_ino ||
	    st.st_dev != eb->want.st_dev)
		return 0;
	return elf_mapping_bias(eb->elf, l->start, l->offset, &eb->bias);
}

int fiber_list_find(pid_t pid, struct fiber_layout *fl, uint64_t *list_addr,
		    char *why, size_t whylen)
{
	struct elf_file exe;
	char path[64];
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	*list_addr = 0;
	if (elf_file_open(&exe, path, why, whylen))
		return -1;
	if (!fiber_layout_derive(&exe, fl, why, whylen)) {
		struct exe_bias eb = { .elf = exe.elf };

		if (fl->list_vaddr && !stat(path, &eb.want) &&
		    proc_maps_each(pid, exe_mapping, &eb) == 1) {
			*list_addr = eb.bias + fl->list_vaddr;
			ret = 0;
		} else {
			snprintf(why, whylen, "no Fiber::fibers in %s, or not mapped", path);
		}
	}
	elf_file_close(&exe);
	if (ret)
		fl->ok = false;
	return ret;
}
