// SPDX-License-Identifier: MIT
#include "live_report.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "crystal_display.h"
#include "module_namer.h"
#include "crystal_names.h"

#define WEIGHT_BITS 40

struct live_stack {
	char *name;		/* site: frames below the allocator, " < " */
	int64_t bytes, objs;
};

struct row {
	const char *name;
	int64_t bytes, objs;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static void report_maps(struct live_report *lr)
{
	Dwfl *d = lr->dwfl;

	dwfl_report_begin(d);
	dwfl_linux_proc_report(d, lr->pid);
	dwfl_report_end(d, NULL, NULL);
}

static const char *name_of(struct live_report *lr, uint64_t ip, bool refreshed,
			   Dwfl_Module **mod)
{
	Dwfl_Module *m;
	const char *n;

	*mod = NULL;
	if (!lr->dwfl)
		return NULL;
	m = dwfl_addrmodule(lr->dwfl, ip);
	if (!m && !refreshed) {
		report_maps(lr);	/* a library mapped since */
		m = dwfl_addrmodule(lr->dwfl, ip);
	}
	n = m ? dwfl_module_addrname(m, ip) : NULL;
	*mod = m;
	return n;
}

/* The display names of a module's symbols (lib/crystal_display.h), built
 * from its whole table as the converter's are, by the module's file. */
static struct crystal_namer *namer_of(struct live_report *lr, Dwfl_Module *m)
{
	const char *name = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	struct live_namer *ln;

	if (!name)
		return NULL;
	for (size_t i = 0; i < lr->nr_namers; i++)
		if (!strcmp(lr->namers[i].module, name))
			return lr->namers[i].namer;
	ln = realloc(lr->namers, (lr->nr_namers + 1) * sizeof(*ln));
	if (!ln)
		return NULL;
	lr->namers = ln;
	ln = &lr->namers[lr->nr_namers];
	ln->module = strdup(name);
	if (!ln->module)
		return NULL;
	ln->namer = module_namer_new(m);
	lr->nr_namers++;
	return ln->namer;
}

/* The site by the one rule of both programs (lib/crystal_names.h), from
 * symbols: as the converter names it without DWARF (diff). */
static char *site_name(struct live_report *lr, const uint64_t *ips, uint32_t nr)
{
	struct site_rule rule;
	bool refreshed = false;

	site_rule_init(&rule);
	for (uint32_t i = 1; i < nr; i++) {
		char hex[32];
		Dwfl_Module *m;
		const char *n = name_of(lr, ips[i] - 1, refreshed, &m);

		refreshed = true;
		if (!n) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)ips[i]);
			n = hex;
		}
		if (site_rule_is_site(&rule, n))
			return crystal_namer_dup(m ? namer_of(lr, m) : NULL, n);
	}
	return strdup("[allocator only]");
}

void live_report_init(struct live_report *lr, pid_t pid)
{
	memset(lr, 0, sizeof(*lr));
	lr->pid = pid;
	lr->dwfl = dwfl_begin(&callbacks);
	if (lr->dwfl)
		report_maps(lr);
	lr->cap = 64;
	lr->stacks = calloc(lr->cap, sizeof(*lr->stacks));
	if (lr->stacks)
		lr->stacks[lr->n++].name = strdup("[stack lost]");
}

void live_report_free(struct live_report *lr)
{
	for (size_t i = 0; i < lr->n; i++)
		free(lr->stacks[i].name);
	free(lr->stacks);
	u64_table_free(&lr->blocks);
	u64_table_free(&lr->slot_of);
	if (lr->dwfl)
		dwfl_end(lr->dwfl);
	for (size_t i = 0; i < lr->nr_namers; i++) {
		free(lr->namers[i].module);
		crystal_namer_free(lr->namers[i].namer);
	}
	free(lr->namers);
	memset(lr, 0, sizeof(*lr));
}

void live_report_stack(struct live_report *lr, uint32_t id, const uint64_t *ips, uint32_t nr)
{
	if (!lr->stacks || !id || u64_table_get_a(&lr->slot_of, id))
		return;
	if (lr->n == lr->cap) {
		struct live_stack *s = realloc(lr->stacks, 2 * lr->cap * sizeof(*s));

		if (!s)
			return;
		lr->stacks = s;
		lr->cap *= 2;
	}
	memset(&lr->stacks[lr->n], 0, sizeof(lr->stacks[0]));
	lr->stacks[lr->n].name = site_name(lr, ips, nr);
	u64_table_put(&lr->slot_of, id, lr->n + 1, 0);
	lr->n++;
}

void live_report_drop(struct live_report *lr, uint64_t addr)
{
	uint64_t v = u64_table_take_a(&lr->blocks, addr);
	size_t slot;

	if (!v)
		return;
	slot = (size_t)(v >> WEIGHT_BITS) - 1;
	if (slot < lr->n) {
		lr->stacks[slot].bytes -= (int64_t)(v & ((1ULL << WEIGHT_BITS) - 1));
		lr->stacks[slot].objs--;
	}
}

void live_report_alloc(struct live_report *lr, uint64_t addr, uint32_t stack_id, uint64_t weight)
{
	uint64_t slot = stack_id ? u64_table_get_a(&lr->slot_of, stack_id) : 1;

	if (!addr || !lr->stacks)
		return;
	live_report_drop(lr, addr);	/* an address handed out again */
	if (!slot || slot > lr->n)
		slot = 1;		/* stack never seen: counted as lost */
	if (weight >= 1ULL << WEIGHT_BITS)
		weight = (1ULL << WEIGHT_BITS) - 1;
	lr->stacks[slot - 1].bytes += (int64_t)weight;
	lr->stacks[slot - 1].objs++;
	u64_table_put(&lr->blocks, addr, slot << WEIGHT_BITS | weight, 0);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static int by_bytes(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

void live_report_print(struct live_report *lr, FILE *out, unsigned top, double elapsed_s)
{
	struct row *rows = calloc(lr->n ? lr->n : 1, sizeof(*rows));
	size_t n = 0, m = 0;
	int64_t total = 0, objs = 0;

	if (!rows)
		return;
	for (size_t i = 0; i < lr->n; i++) {
		rows[n++] = (struct row){ lr->stacks[i].name, lr->stacks[i].bytes, lr->stacks[i].objs };
		total += lr->stacks[i].bytes;
		objs += lr->stacks[i].objs;
	}
	/* Stacks with the same site name are one site. */
	qsort(rows, n, sizeof(*rows), by_name);
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(rows[m - 1].name, rows[i].name)) {
			rows[m - 1].bytes += rows[i].bytes;
			rows[m - 1].objs += rows[i].objs;
		} else {
			rows[m++] = rows[i];
		}
	}
	qsort(rows, m, sizeof(*rows), by_bytes);
	lr->reports++;
	fprintf(out, "alys-bpf: [%.1f s] live after collection %u: %lld bytes in %lld blocks; "
		"top sites by live bytes:\n", elapsed_s, lr->gc_no, (long long)total,
		(long long)objs);
	for (size_t i = 0; i < m && i < top && rows[i].bytes > 0; i++)
		fprintf(out, "  %12lld bytes %9lld blocks  %s\n", (long long)rows[i].bytes,
			(long long)rows[i].objs, rows[i].name);
	fflush(out);
	free(rows);
}
