// SPDX-License-Identifier: MIT
#include "lib/call_finder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool named(const struct call_finder *cf, const char *name)
{
	for (size_t i = 0; i < cf->nr_names; i++)
		if (!strcmp(name, cf->names[i]))
			return true;
	return false;
}

static int add_entry(struct call_finder *cf, uint64_t a, size_t *cap)
{
	if (cf->nr_entries == *cap) {
		size_t n = *cap ? 2 * *cap : 16;
		uint64_t *v = realloc(cf->entries, n * sizeof(*v));

		if (!v)
			return -1;
		cf->entries = v;
		*cap = n;
	}
	cf->entries[cf->nr_entries++] = a;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_entry(const struct call_finder *cf, uint64_t a)
{
	return cf->nr_entries &&
	       bsearch(&a, cf->entries, cf->nr_entries, sizeof(a), cmp_u64) != NULL;
}

/* A GOT slot whose relocation names one of the functions (cached). */
static bool slot_named(struct call_finder *cf, uint64_t slot)
{
	struct u64_slot *c = u64_table_get(&cf->slot_cache, slot + 1);
	struct elf_reloc r;
	bool yes;

	if (c)
		return c->a == 1;
	yes = elf_file_reloc_at(cf->ef, slot, &r) && named(cf, r.sym);
	u64_table_put(&cf->slot_cache, slot + 1, yes ? 1 : 2, 0);
	return yes;
}

/* Defined symbols, and PLT stubs: `[endbr64;] jmp *slot(%rip)`. */
static int find_entries(struct call_finder *cf)
{
	static const char *const plts[] = { ".plt.sec", ".plt" };
	size_t cap = 0;

	for (size_t i = 0; i < cf->nr_names; i++) {
		GElf_Addr v;
		GElf_Xword sz;

		if (elf_file_find_symbol(cf->ef, cf->names[i], &v, &sz) && add_entry(cf, v, &cap))
			return -1;
	}
	for (size_t p = 0; p < sizeof(plts) / sizeof(plts[0]); p++) {
		GElf_Addr base;
		size_t size;
		const uint8_t *code;

		if (!elf_file_section(cf->ef, plts[p], &base, &size) ||
		    !(code = elf_file_bytes_at(cf->ef, base, size)))
			continue;
		for (size_t off = 0; off + 16 <= size; off += 16) {
			const uint8_t *c = code + off;
			size_t left = 16;
			uint64_t addr = base + off;

			for (int k = 0; k < 2 && cs_disasm_iter(cf->cs, &c, &left, &addr, cf->in); k++) {
				const cs_x86 *x = &cf->in->detail->x86;

				if (cf->in->id == X86_INS_ENDBR64)
					continue;
				if (cf->in->id == X86_INS_JMP && x->op_count == 1 &&
				    x->operands[0].type == X86_OP_MEM &&
				    x->operands[0].mem.base == X86_REG_RIP &&
				    slot_named(cf, cf->in->address + cf->in->size +
						   (uint64_t)x->operands[0].mem.disp) &&
				    add_entry(cf, base + off, &cap))
					return -1;
				break;
			}
		}
	}
	if (cf->nr_entries > 1)
		qsort(cf->entries, cf->nr_entries, sizeof(*cf->entries), cmp_u64);
	return 0;
}

int call_finder_init(struct call_finder *cf, struct elf_file *ef, const char *const *names,
		     size_t nr_names)
{
	memset(cf, 0, sizeof(*cf));
	cf->ef = ef;
	cf->names = names;
	cf->nr_names = nr_names;
	u64_table_init(&cf->slot_cache);
	if (!elf_file_section(ef, ".text", &cf->text, &cf->text_size) ||
	    !(cf->text_code = elf_file_bytes_at(ef, cf->text, cf->text_size)))
		return -1;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cf->cs) != CS_ERR_OK)
		return -1;
	cs_option(cf->cs, CS_OPT_DETAIL, CS_OPT_ON);
	cf->in = cs_malloc(cf->cs);
	if (!cf->in || find_entries(cf))
		return -1;
	return 0;
}

void call_finder_free(struct call_finder *cf)
{
	if (cf->in)
		cs_free(cf->in, 1);
	if (cf->cs)
		cs_close(&cf->cs);
	free(cf->entries);
	u64_table_free(&cf->slot_cache);
	memset(cf, 0, sizeof(*cf));
}

void call_finder_each(struct call_finder *cf, int (*fn)(void *arg, uint64_t call, uint64_t ret),
		      void *arg)
{
	const uint8_t *code = cf->text_code;

	if (!cf->nr_entries)
		return;
	for (size_t i = 0; i + 6 <= cf->text_size; i++) {
		uint64_t at = cf->text + i, ret = 0;
		int32_t rel;

		if (code[i] == 0xe8) {
			memcpy(&rel, code + i + 1, 4);
			if (is_entry(cf, at + 5 + (int64_t)rel))
				ret = at + 5;
		} else if (code[i] == 0xff && code[i + 1] == 0x15) {
			memcpy(&rel, code + i + 2, 4);
			if (slot_named(cf, at + 6 + (int64_t)rel))
				ret = at + 6;
		}
		if (ret && fn(arg, at, ret))
			return;
	}
}

bool call_finder_reaches(struct call_finder *cf, const cs_insn *in)
{
	const cs_x86_op *op = &in->detail->x86.operands[0];

	if (in->detail->x86.op_count != 1)
		return false;
	if (op->type == X86_OP_IMM)
		return is_entry(cf, (uint64_t)op->imm);
	return op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP &&
	       slot_named(cf, in->address + in->size + (uint64_t)op->mem.disp);
}
