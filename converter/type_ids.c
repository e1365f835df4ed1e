// SPDX-License-Identifier: MIT
#include "type_ids.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "crystal_names.h"
#include "elf_file.h"
#include "util.h"
#include "x86_insn.h"

/* What Crystal code calls to allocate an object: its wrappers (debug
 * builds) or the collector itself (--release inlines the wrappers). */
static const char *const allocators[] = {
	"__crystal_malloc64", "__crystal_malloc_atomic64",
	"__crystal_malloc", "__crystal_malloc_atomic",
	"GC_malloc", "GC_malloc_atomic",
};

/* Instructions followed from an allocation call to its type id store (a
 * debug build initializes the fields first; IO::FileDescriptor::new takes
 * over 100). */
#define STORE_WINDOW 400
/* Type ids are small consecutive numbers; a larger constant stored at
 * offset 0 is data (an atomic buffer's first bytes). */
#define MAX_TYPE_ID (1u << 20)

#define REG(n) (1u << (n))
/* x86_dwarf_regno numbering: rax 0, rdx 1, rcx 2, rsi 4, rdi 5, r8-r11 8-11 */
#define CALLER_SAVED (REG(0) | REG(1) | REG(2) | REG(4) | REG(5) | REG(8) | REG(9) | \
		      REG(10) | REG(11))
#define RSP 7
#define RBP 6
#define MAX_SLOTS 8

struct scan {
	struct elf_file ef;
	csh cs;
	cs_insn *in;
	uint64_t *entries;		/* allocator entry points, sorted */
	size_t nr_entries, cap_entries;
	struct u64_table slot_is_alloc;	/* GOT slot + 1 -> 1 allocator, 2 not */
	const uint8_t *text_code;	/* .text */
	uint64_t text;
	size_t text_size;
};

/* Where the pointer the allocator returned is: registers and stack slots. */
struct held {
	uint16_t regs;
	struct { int base; int64_t disp; } slot[MAX_SLOTS];
	int nr_slots;
};

static bool is_allocator(const char *name)
{
	for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++)
		if (!strcmp(name, allocators[i]))
			return true;
	return false;
}

static void add_entry(struct scan *s, uint64_t a)
{
	s->entries = grow_array(s->entries, &s->cap_entries, s->nr_entries + 1,
				sizeof(*s->entries));
	s->entries[s->nr_entries++] = a;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_entry(const struct scan *s, uint64_t a)
{
	return s->nr_entries &&
	       bsearch(&a, s->entries, s->nr_entries, sizeof(a), cmp_u64) != NULL;
}

/* A GOT slot whose relocation names an allocator (cached). */
static bool slot_allocates(struct scan *s, uint64_t slot)
{
	struct u64_slot *c = u64_table_get(&s->slot_is_alloc, slot + 1);
	struct elf_reloc r;
	bool yes;

	if (c)
		return c->a == 1;
	yes = elf_file_reloc_at(&s->ef, slot, &r) && is_allocator(r.sym);
	u64_table_put(&s->slot_is_alloc, slot + 1, yes ? 1 : 2, 0);
	return yes;
}

/* The allocator entry points: defined symbols (libgc linked statically,
 * Crystal's wrappers) and PLT stubs (`[endbr64;] jmp *slot(%rip)`). */
static void find_entries(struct scan *s)
{
	static const char *const plts[] = { ".plt.sec", ".plt" };

	for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++) {
		GElf_Addr v;
		GElf_Xword sz;

		if (elf_file_find_symbol(&s->ef, allocators[i], &v, &sz))
			add_entry(s, v);
	}
	for (size_t p = 0; p < sizeof(plts) / sizeof(plts[0]); p++) {
		GElf_Addr base;
		size_t size;
		const uint8_t *code;

		if (!elf_file_section(&s->ef, plts[p], &base, &size) ||
		    !(code = elf_file_bytes_at(&s->ef, base, size)))
			continue;
		for (size_t off = 0; off + 16 <= size; off += 16) {
			const uint8_t *c = code + off;
			size_t left = 16;
			uint64_t addr = base + off;

			for (int k = 0; k < 2 && cs_disasm_iter(s->cs, &c, &left, &addr, s->in); k++) {
				const cs_x86 *x = &s->in->detail->x86;

				if (s->in->id == X86_INS_ENDBR64)
					continue;
				if (s->in->id == X86_INS_JMP && x->op_count == 1 &&
				    x->operands[0].type == X86_OP_MEM &&
				    x->operands[0].mem.base == X86_REG_RIP &&
				    slot_allocates(s, s->in->address + s->in->size +
						      (uint64_t)x->operands[0].mem.disp))
					add_entry(s, base + off);
				break;
			}
		}
	}
	if (s->nr_entries > 1)
		qsort(s->entries, s->nr_entries, sizeof(*s->entries), cmp_u64);
}

static int slot_index(const struct held *h, int base, int64_t disp)
{
	for (int i = 0; i < h->nr_slots; i++)
		if (h->slot[i].base == base && h->slot[i].disp == disp)
			return i;
	return -1;
}

static void set_slot(struct held *h, int base, int64_t disp, bool holds)
{
	int i = slot_index(h, base, disp);

	if (holds && i < 0 && h->nr_slots < MAX_SLOTS)
		h->slot[h->nr_slots++] = (typeof(h->slot[0])){ base, disp };
	else if (!holds && i >= 0)
		h->slot[i] = h->slot[--h->nr_slots];
}

/* A plain [rsp + disp] or [rbp + disp] operand: a stack slot. */
static bool stack_slot(const cs_x86_op *op, int *base, int64_t *disp)
{
	int b = x86_dwarf_regno(op->mem.base);

	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID ||
	    op->mem.segment != X86_REG_INVALID || (b != RSP && b != RBP))
		return false;
	*base = b;
	*disp = op->mem.disp;
	return true;
}

static void set_reg(struct held *h, int r, bool holds)
{
	if (r < 0)
		return;
	if (holds)
		h->regs |= REG(r);
	else
		h->regs &= ~REG(r);
}

/* The target of a call, if it is an allocator. */
static bool call_allocates(struct scan *s, const cs_insn *in)
{
	const cs_x86_op *op = &in->detail->x86.operands[0];

	if (in->detail->x86.op_count != 1)
		return false;
	if (op->type == X86_OP_IMM)
		return is_entry(s, (uint64_t)op->imm);
	return op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP &&
	       slot_allocates(s, in->address + in->size + (uint64_t)op->mem.disp);
}

/*
 * Follow the returned pointer from ret (the instruction after the call)
 * through register moves and stack spills, across the calls that zero the
 * object (memset), to the first constant stored at its offset 0.
 */
static bool find_store(struct scan *s, uint64_t ret, uint32_t *id, uint64_t *at)
{
	struct held h = { .regs = REG(0) };	/* rax */
	const uint8_t *c = s->text_code + (ret - s->text);
	size_t left = s->text_size - (ret - s->text);
	uint64_t addr = ret;

	for (int n = 0; n < STORE_WINDOW && h.regs | h.nr_slots &&
	     cs_disasm_iter(s->cs, &c, &left, &addr, s->in); n++) {
		const cs_insn *in = s->in;
		const cs_x86 *x = &in->detail->x86;
		const cs_x86_op *dst = &x->operands[0], *src = &x->operands[1];
		cs_regs rd, wr;
		uint8_t nrd, nwr;
		int base, d, sr;
		int64_t disp;

		switch (in->id) {
		case X86_INS_JMP:
			/* Debug code jumps around its overflow checks: follow a
			 * direct jump, within the instruction budget. */
			if (x->op_count == 1 && dst->type == X86_OP_IMM &&
			    (uint64_t)dst->imm >= s->text &&
			    (uint64_t)dst->imm < s->text + s->text_size) {
				addr = (uint64_t)dst->imm;
				c = s->text_code + (addr - s->text);
				left = s->text_size - (addr - s->text);
				continue;
			}
			return false;
		case X86_INS_RET:
		case X86_INS_UD2:
		case X86_INS_HLT:
			return false;
		case X86_INS_CALL:
			if (call_allocates(s, in))
				return false;
			h.regs &= ~CALLER_SAVED;
			continue;
		case X86_INS_MOV:
			if (x->op_count != 2)
				break;
			d = dst->type == X86_OP_REG ? x86_dwarf_regno(dst->reg) : -1;
			sr = src->type == X86_OP_REG ? x86_dwarf_regno(src->reg) : -1;
			if (dst->type == X86_OP_MEM && src->type == X86_OP_IMM) {
				int b = x86_dwarf_regno(dst->mem.base);

				if (b >= 0 && b != RSP && (h.regs & REG(b)) && !dst->mem.disp &&
				    dst->mem.index == X86_REG_INVALID &&
				    (dst->size == 4 || dst->size == 8)) {
					if (!src->imm)
						continue;	/* zeroing it first */
					if ((uint64_t)src->imm >= MAX_TYPE_ID)
						return false;
					*id = (uint32_t)src->imm;
					*at = in->address;
					return true;
				}
				if (stack_slot(dst, &base, &disp))
					set_slot(&h, base, disp, false);
				continue;
			}
			if (dst->type == X86_OP_REG && src->type == X86_OP_REG) {
				set_reg(&h, d, dst->size == 8 && sr >= 0 && (h.regs & REG(sr)));
				continue;
			}
			if (dst->type == X86_OP_MEM && src->type == X86_OP_REG &&
			    stack_slot(dst, &base, &disp)) {
				set_slot(&h, base, disp, dst->size == 8 && sr >= 0 && (h.regs & REG(sr)));
				continue;
			}
			if (dst->type == X86_OP_REG && src->type == X86_OP_MEM) {
				set_reg(&h, d, dst->size == 8 && stack_slot(src, &base, &disp) &&
					       slot_index(&h, base, disp) >= 0);
				continue;
			}
			break;
		default:
			break;
		}
		/* Anything else: what it writes no longer holds the pointer. */
		if (cs_regs_access(s->cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
			return false;
		for (int i = 0; i < nwr; i++) {
			int r = x86_dwarf_regno(wr[i]);

			if (r == RSP)
				for (int k = h.nr_slots; k-- > 0;)
					if (h.slot[k].base == RSP)
						set_slot(&h, RSP, h.slot[k].disp, false);
			set_reg(&h, r, false);
		}
	}
	return false;
}

/* "Hash(K, V)": a generic type as its source declares it, not the
 * instantiation being built. */
static bool generic_form(const char *type)
{
	const char *p = strchr(type, '(');

	if (!p)
		return false;
	for (p++; *p && *p != ')'; p++) {
		while (*p == ' ')
			p++;
		if (*p < 'A' || *p > 'Z' || (p[1] != ',' && p[1] != ')'))
			return false;
		p++;
		if (*p == ')')
			break;
	}
	return true;
}

/*
 * The type a store at runtime address ip names: the innermost constructor
 * frame there (an inlined T::new, or the function). An inlined `new` whose
 * owner is unknown, or known only in its generic form, ends the search:
 * the frames outside it are its callers, not the type.
 */
static bool name_at(struct symbolizer *sym, uint64_t ip, char *out, size_t len)
{
	const struct sym_entry *e = symbolizer_entry(sym, symbolizer_resolve(sym, ip, 0));

	for (uint32_t k = 0; k < e->nr_frames; k++) {
		if (is_bare_constructor(e->frames[k].name))
			return false;
		if (crystal_constructed_type(e->frames[k].name, out, len))
			return !generic_form(out);
	}
	return false;
}

/* Runtime address of vaddr in the file of the trace mappings of path. */
static bool runtime_of(const struct trace *t, struct scan *s, const char *path, uint64_t vaddr,
		       uint64_t *ip)
{
	uint64_t off;

	if (!elf_file_vaddr_to_offset(&s->ef, vaddr, &off))
		return false;
	for (size_t i = 0; i < t->nr_maps; i++) {
		const struct trace_mapping *m = &t->maps[i];

		if (m->path.ptr && !strcmp(m->path.ptr, path) && off >= m->offset &&
		    off - m->offset < m->end - m->start) {
			*ip = m->start + (off - m->offset);
			return true;
		}
	}
	return false;
}

static void add_name(struct type_ids *ti, uint32_t id, const char *name)
{
	if (u64_table_get(&ti->by_id, (uint64_t)id + 1))
		return;
	u64_table_put(&ti->by_id, (uint64_t)id + 1, str_table_intern(&ti->names, name), 0);
	ti->named++;
}

/* Strings are built by String.new's block, which stores a constant read
 * from memory rather than an immediate: String::TYPE_ID, in .rodata. */
static void string_type_id(struct type_ids *ti, struct scan *s)
{
	GElf_Addr v;
	GElf_Xword sz;
	const uint8_t *p;
	uint32_t id;

	if (!elf_file_find_symbol(&s->ef, "String::TYPE_ID", &v, &sz) || sz < 4 ||
	    !(p = elf_file_bytes_at(&s->ef, v, 4)))
		return;
	memcpy(&id, p, 4);
	if (id && id < MAX_TYPE_ID)
		add_name(ti, id, "String");
}

static void scan_file(struct type_ids *ti, const struct trace *t, struct symbolizer *sym,
		      const struct trace_mapping *m)
{
	struct scan s = { 0 };
	char err[512], name[SITE_TYPE_MAX];
	uint8_t id_bytes[64];
	const uint8_t *code;
	size_t size;

	if (elf_file_open(&s.ef, m->path.ptr, err, sizeof(err)))
		return;	/* the symbolizer says why it cannot read the file */
	if (m->build_id_len &&
	    (elf_file_build_id(&s.ef, id_bytes, sizeof(id_bytes)) != m->build_id_len ||
	     memcmp(id_bytes, m->build_id, m->build_id_len)))
		goto out;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &s.cs) != CS_ERR_OK)
		goto out;
	cs_option(s.cs, CS_OPT_DETAIL, CS_OPT_ON);
	s.in = cs_malloc(s.cs);
	u64_table_init(&s.slot_is_alloc);
	find_entries(&s);
	if (!s.nr_entries || !elf_file_section(&s.ef, ".text", &s.text, &s.text_size) ||
	    !(s.text_code = elf_file_bytes_at(&s.ef, s.text, s.text_size)))
		goto done;
	code = s.text_code;
	size = s.text_size;
	string_type_id(ti, &s);
	/* Calls are found by their encoding (a byte scan is far faster than
	 * disassembling everything); each is then decoded from its return
	 * address. */
	for (size_t i = 0; i + 6 <= size; i++) {
		uint64_t ret = 0, ip, ret_ip;
		uint32_t id;
		uint64_t at;
		int32_t rel;

		if (code[i] == 0xe8) {
			memcpy(&rel, code + i + 1, 4);
			if (is_entry(&s, s.text + i + 5 + (int64_t)rel))
				ret = s.text + i + 5;
		} else if (code[i] == 0xff && code[i + 1] == 0x15) {
			memcpy(&rel, code + i + 2, 4);
			if (slot_allocates(&s, s.text + i + 6 + (int64_t)rel))
				ret = s.text + i + 6;
		}
		if (!ret)
			continue;
		ti->allocations++;
		if (!find_store(&s, ret, &id, &at))
			continue;
		ti->stores++;
		if (!runtime_of(t, &s, m->path.ptr, at, &ip) ||
		    !runtime_of(t, &s, m->path.ptr, ret, &ret_ip) ||
		    !name_at(sym, ip, name, sizeof(name)))
			continue;
		add_name(ti, id, name);
		u64_table_put(&ti->by_call, ret_ip, str_table_intern(&ti->names, name), 0);
	}
done:
	u64_table_free(&s.slot_is_alloc);
	free(s.entries);
	cs_free(s.in, 1);
	cs_close(&s.cs);
out:
	elf_file_close(&s.ef);
}

void type_ids_scan(struct type_ids *ti, const struct trace *t, struct symbolizer *sym)
{
	const char *exe = t->hdr.exe.ptr;

	memset(ti, 0, sizeof(*ti));
	u64_table_init(&ti->by_id);
	u64_table_init(&ti->by_call);
	str_table_init(&ti->names);
	if (!exe)
		return;
	/* One scan per file: its first mapping stands for the others. */
	for (size_t i = 0; i < t->nr_maps; i++)
		if (t->maps[i].path.ptr && !strcmp(t->maps[i].path.ptr, exe)) {
			scan_file(ti, t, sym, &t->maps[i]);
			break;
		}
}

void type_ids_free(struct type_ids *ti)
{
	u64_table_free(&ti->by_id);
	u64_table_free(&ti->by_call);
	str_table_free(&ti->names);
}

const char *type_ids_name(const struct type_ids *ti, uint32_t id)
{
	const struct u64_slot *s = u64_table_get(&ti->by_id, (uint64_t)id + 1);

	return s ? str_table_get(&ti->names, (uint32_t)s->a) : NULL;
}

const char *type_ids_call(const struct type_ids *ti, uint64_t ret)
{
	const struct u64_slot *s = u64_table_get(&ti->by_call, ret);

	return s ? str_table_get(&ti->names, (uint32_t)s->a) : NULL;
}
