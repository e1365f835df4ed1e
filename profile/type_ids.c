// SPDX-License-Identifier: MIT
#include "profile/type_ids.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crystal_names.h"
#include "lib/call_finder.h"
#include "lib/elf_file.h"
#include "lib/util.h"
#include "lib/x86_insn.h"

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
	struct call_finder cf;		/* allocation calls */
	uint64_t bias;			/* of the file's mapping in the trace */
	struct type_ids *ti;
	struct symbolizer *sym;
	const struct trace_mapping *m;
	struct elf_file *ef;
};

/* Where the pointer the allocator returned is: registers and stack slots. */
struct held {
	uint16_t regs;
	struct { int base; int64_t disp; } slot[MAX_SLOTS];
	int nr_slots;
};

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

/*
 * Follow the returned pointer from ret (the instruction after the call)
 * through register moves and stack spills, across the calls that zero the
 * object (memset), to the first constant stored at its offset 0.
 */
static bool find_store(struct scan *s, uint64_t ret, uint32_t *id, uint64_t *at)
{
	struct call_finder *cf = &s->cf;
	struct held h = { .regs = REG(0) };	/* rax */
	const uint8_t *c = cf->text_code + (ret - cf->text);
	size_t left = cf->text_size - (ret - cf->text);
	uint64_t addr = ret;

	for (int n = 0; n < STORE_WINDOW && h.regs | h.nr_slots &&
	     cs_disasm_iter(cf->cs, &c, &left, &addr, cf->in); n++) {
		const cs_insn *in = cf->in;
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
			    (uint64_t)dst->imm >= cf->text &&
			    (uint64_t)dst->imm < cf->text + cf->text_size) {
				addr = (uint64_t)dst->imm;
				c = cf->text_code + (addr - cf->text);
				left = cf->text_size - (addr - cf->text);
				continue;
			}
			return false;
		case X86_INS_RET:
		case X86_INS_UD2:
		case X86_INS_HLT:
			return false;
		case X86_INS_CALL:
			if (call_finder_reaches(cf, in))
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
		if (cs_regs_access(cf->cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
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

/* "Hash(K, V)", "Hash(?, ?)": a generic type as its source declares it,
 * or with its parameters unknown, not the instantiation being built. */
static bool generic_form(const char *type)
{
	const char *p = strchr(type, '(');

	if (!p)
		return false;
	for (p++; *p && *p != ')'; p++) {
		while (*p == ' ')
			p++;
		if (((*p < 'A' || *p > 'Z') && *p != '?') || (p[1] != ',' && p[1] != ')'))
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
		if (is_bare_constructor(e->frames[k].symbol))
			return false;
		if (crystal_constructed_type(e->frames[k].symbol, out, len))
			return !generic_form(out);
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

/* The type id in the first 4 bytes of a constant of the program, or 0. */
static uint32_t id_at(struct elf_file *ef, GElf_Addr vaddr, GElf_Xword size)
{
	const uint8_t *p;
	uint32_t id;

	if (size < 4 || !(p = elf_file_bytes_at(ef, vaddr, 4)))
		return 0;
	memcpy(&id, p, 4);
	return id < MAX_TYPE_ID ? id : 0;
}

/* Strings are built by String.new's block, which stores a constant read
 * from memory rather than an immediate: String::TYPE_ID, in .rodata. */
static void string_type_id(struct type_ids *ti, struct elf_file *ef)
{
	GElf_Addr v;
	GElf_Xword sz;
	uint32_t id;

	if (elf_file_find_symbol(ef, "String::TYPE_ID", &v, &sz) && (id = id_at(ef, v, sz)))
		add_name(ti, id, "String");
}

/* Since Crystal 1.16 each type's id is a constant of its own,
 * "Array(CensusFoo):type_id" (4 bytes), which the code loads before storing
 * it: the symbol table names every id. (--release builds one module, where
 * the constants fold into immediate stores, read by on_call below.) */
static void on_object(void *arg, const char *name, GElf_Addr vaddr, GElf_Xword size)
{
	static const char suffix[] = ":type_id";
	struct scan *s = arg;
	size_t n = strlen(name), k = sizeof(suffix) - 1;
	char type[SITE_TYPE_MAX];
	uint32_t id;

	if (size != 4 || n <= k || n - k >= sizeof(type) || strcmp(name + n - k, suffix) ||
	    !(id = id_at(s->ef, vaddr, size)))
		return;
	memcpy(type, name, n - k);
	type[n - k] = 0;
	add_name(s->ti, id, type);
}

/* One allocation call: the type id its code stores, named by the frame
 * holding the store. */
static int on_call(void *arg, uint64_t call, uint64_t ret)
{
	struct scan *s = arg;
	struct type_ids *ti = s->ti;
	char name[SITE_TYPE_MAX];
	uint64_t at, ip, ret_ip;
	uint32_t id;

	(void)call;
	ti->allocations++;
	if (!find_store(s, ret, &id, &at))
		return 0;
	ti->stores++;
	ip = at + s->bias;
	ret_ip = ret + s->bias;
	if (!name_at(s->sym, ip, name, sizeof(name)))
		return 0;
	add_name(ti, id, name);
	u64_table_put(&ti->by_call, ret_ip, str_table_intern(&ti->names, name), 0);
	return 0;
}

static void scan_file(struct type_ids *ti, struct symbolizer *sym, const struct trace *t,
		      size_t map_index)
{
	const struct trace_mapping *m = &t->maps[map_index];
	struct scan s = { .ti = ti, .sym = sym, .m = m };
	const char *file = symbolizer_mapping_file(sym, map_index);
	struct elf_file ef;
	char err[512];

	/* the symbolizer found the file with m's build id, or says why not */
	if (!file || elf_file_open(&ef, file, err, sizeof(err)))
		return;
	string_type_id(ti, &ef);
	s.ef = &ef;
	elf_file_each_object(&ef, on_object, &s);
	if (!elf_mapping_bias(ef.elf, m->start, m->offset, &s.bias))
		goto out;
	if (!call_finder_init(&s.cf, &ef, allocators, sizeof(allocators) / sizeof(allocators[0])))
		call_finder_each(&s.cf, on_call, &s);
	call_finder_free(&s.cf);
out:
	elf_file_close(&ef);
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
			scan_file(ti, sym, t, i);
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
