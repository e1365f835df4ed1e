// SPDX-License-Identifier: MIT
#include "gc/fiber_layout.h"

#include <stdio.h>
#include <string.h>

#include "lib/call_finder.h"
#include "lib/elf_file.h"
#include "lib/x86_insn.h"

#define RDI 5
#define RSI 4
#define LOOK_BACK 32		/* bytes before a call searched for the loads */

struct derive {
	struct call_finder cf;
	bool crystal_push;		/* calls to GC::push_stack (debug builds) */
	uint32_t top, bottom;
	int found, disagree;
};

/*
 * The loads of the two arguments right before the call at `call`:
 * `mov top(R), %rdi; mov bottom(R), %rsi` from one register R (the fiber).
 * x86 cannot be decoded backwards: decode from each of the LOOK_BACK bytes
 * before the call, keeping a start whose instructions end exactly at it.
 */
static bool arg_loads(struct derive *d, uint64_t call, uint32_t *top, uint32_t *bottom)
{
	struct call_finder *cf = &d->cf;

	for (uint64_t start = call > cf->text + LOOK_BACK ? call - LOOK_BACK : cf->text;
	     start < call; start++) {
		const uint8_t *c = cf->text_code + (start - cf->text);
		size_t left = call - start;
		uint64_t addr = start;
		int64_t disp[16];
		int base[16];

		for (int r = 0; r < 16; r++)
			base[r] = -1;
		while (left && cs_disasm_iter(cf->cs, &c, &left, &addr, cf->in)) {
			const cs_x86 *x = &cf->in->detail->x86;
			const cs_x86_op *dst = &x->operands[0], *src = &x->operands[1];
			int dr = x->op_count == 2 && dst->type == X86_OP_REG ?
				 x86_dwarf_regno(dst->reg) : -1;

			if (dr < 0)
				continue;
			base[dr] = -1;
			if (cf->in->id == X86_INS_MOV && dst->size == 8 && src->type == X86_OP_MEM &&
			    src->mem.index == X86_REG_INVALID && src->mem.disp >= 0 &&
			    src->mem.disp < 4096 && x86_dwarf_regno(src->mem.base) >= 0) {
				base[dr] = x86_dwarf_regno(src->mem.base);
				disp[dr] = src->mem.disp;
			}
		}
		if (addr != call || left)
			continue;
		if (base[RDI] >= 0 && base[RDI] == base[RSI] && disp[RDI] != disp[RSI]) {
			*top = (uint32_t)disp[RDI];
			*bottom = (uint32_t)disp[RSI];
			return true;
		}
	}
	return false;
}

/* Where a call pushing a fiber's stack is: in Crystal's GC module's
 * callback (gc/boehm.cr), or a call to GC::push_stack. libgc pushes its
 * own ranges with the same function: those do not count. */
static bool pushes_a_fiber(struct derive *d, uint64_t call)
{
	char fn[1024];
	uint64_t off;

	if (d->crystal_push)
		return true;
	return elf_file_symbol_at(d->cf.ef, call, fn, sizeof(fn), &off) &&
	       strstr(fn, "gc/boehm.cr");
}

static int on_call(void *arg, uint64_t call, uint64_t ret)
{
	struct derive *d = arg;
	uint32_t top, bottom;

	(void)ret;
	if (!pushes_a_fiber(d, call) || !arg_loads(d, call, &top, &bottom))
		return 0;
	if (d->found && (top != d->top || bottom != d->bottom))
		d->disagree++;
	d->top = top;
	d->bottom = bottom;
	d->found++;
	return 0;
}

int fiber_layout_derive(struct elf_file *exe, struct fiber_layout *fl, char *why, size_t whylen)
{
	static const char *const push_stack[] = { "*GC::push_stack<Pointer(Void), Pointer(Void)>:Nil" };
	static const char *const push_all[] = { "GC_push_all_eager" };
	struct derive d = { 0 };
	GElf_Addr v;
	GElf_Xword sz;

	memset(fl, 0, sizeof(*fl));
	d.crystal_push = elf_file_find_symbol(exe, push_stack[0], &v, &sz);
	if (call_finder_init(&d.cf, exe, d.crystal_push ? push_stack : push_all, 1)) {
		call_finder_free(&d.cf);
		snprintf(why, whylen, "%s has no code to read", exe->path);
		return -1;
	}
	call_finder_each(&d.cf, on_call, &d);
	call_finder_free(&d.cf);
	if (!d.found || d.disagree) {
		snprintf(why, whylen, "%s: %s", exe->path, d.found ?
			 "the calls that push fiber stacks read different fields" :
			 "no call pushing a fiber's stack found (not a Crystal program?)");
		return -1;
	}
	fl->stack_top_off = d.top;
	fl->stack_bottom_off = d.bottom;
	if (elf_file_find_symbol(exe, "Fiber::fibers", &v, &sz))
		fl->list_vaddr = v;
	fl->ok = true;
	return 0;
}
