// SPDX-License-Identifier: MIT
#include "unwind/cfa_program.h"
#include "unwind/leb128.h"

#include <dwarf.h>
#include <string.h>

#define REG_RBP 6
#define REG_RSP 7
#define STATES_MAX 16	/* remember_state depth; deeper: libdw's */

enum rule { RULE_UNSPEC, RULE_UNDEF, RULE_SAME, RULE_OFFSET, RULE_OTHER };

struct reg_rule {
	enum rule rule;
	int64_t off;		/* RULE_OFFSET: saved at CFA + off */
};

struct cfa_state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	bool cfa_set;
	struct reg_rule ra, rbp;
};

struct run {
	const struct cfa_cie *cie;
	struct cfa_state s, init, stack[STATES_MAX];
	int depth;
	uint64_t loc, hi;
	cfa_row_fn fn;		/* NULL: a check, no row */
	void *arg;
	int rc;
};

/* v times a CIE's factor, wrapping: a hostile file's numbers are no UB */
static int64_t factored(int64_t v, int64_t f)
{
	return (int64_t)((uint64_t)v * (uint64_t)f);
}

/* The rule of a register alys reads, or NULL for the others. */
static struct reg_rule *tracked(struct run *r, struct cfa_state *s, uint64_t reg)
{
	return reg == r->cie->ra_reg ? &s->ra : reg == REG_RBP ? &s->rbp : NULL;
}

/* As unwind_table.c's classify makes of libdw's answer; false: a rule
 * libdw would fill from the ABI's defaults. */
static bool state_row(const struct cfa_state *s, struct alys_unwind_row *row)
{
	memset(row, 0, sizeof(*row));
	row->cfa_type = ALYS_CFA_UNSUPPORTED;
	if (!s->cfa_set || s->ra.rule == RULE_UNSPEC)
		return false;
	if (s->ra.rule == RULE_UNDEF) {
		row->cfa_type = ALYS_CFA_OUTERMOST;
		return true;
	}
	if (s->ra.rule != RULE_OFFSET || s->ra.off != -8)
		return true;
	if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX)
		return true;
	if (s->cfa_reg == REG_RSP)
		row->cfa_type = ALYS_CFA_RSP;
	else if (s->cfa_reg == REG_RBP)
		row->cfa_type = ALYS_CFA_RBP;
	else
		return true;
	row->cfa_offset = (int32_t)s->cfa_off;
	row->rbp_type = ALYS_RBP_UNSUPPORTED;
	if (s->rbp.rule == RULE_SAME || s->rbp.rule == RULE_UNSPEC) {
		row->rbp_type = ALYS_RBP_SAME;
	} else if (s->rbp.rule == RULE_OFFSET && s->rbp.off >= INT16_MIN &&
		   s->rbp.off <= INT16_MAX) {
		row->rbp_type = ALYS_RBP_OFFSET;
		row->rbp_offset = (int16_t)s->rbp.off;
	}
	return true;
}

/* The rules so far hold up to to. false: stop (done, libdw's, or fn's). */
static bool advance(struct run *r, uint64_t to)
{
	struct alys_unwind_row row;

	if (to > r->hi)
		to = r->hi;
	if (to > r->loc) {
		if (!state_row(&r->s, &row)) {
			r->rc = 1;
			return false;
		}
		if (r->fn && (r->rc = r->fn(r->loc, to, &row, r->arg)) != 0)
			return false;
		r->loc = to;
	}
	return r->loc < r->hi;
}

/* Runs [p, end); false when it stopped (r->rc says why: 0 past hi). */
static bool run_insns(struct run *r, const uint8_t *p, const uint8_t *end)
{
	const struct cfa_cie *c = r->cie;

	while (p < end) {
		uint8_t op = *p++, low = op & 0x3f;
		uint64_t reg, u, u2;
		int64_t s;
		struct reg_rule *rr;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			if (!advance(r, r->loc + low * c->code_align))
				return false;
			continue;
		case DW_CFA_offset:
			if (!read_uleb128(&p, end, &u))
				goto other;
			if ((rr = tracked(r, &r->s, low)))
				*rr = (struct reg_rule){ RULE_OFFSET,
							 factored((int64_t)u, c->data_align) };
			continue;
		case DW_CFA_restore:
			if ((rr = tracked(r, &r->s, low)))
				*rr = *tracked(r, &r->init, low);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4: {
			unsigned n = op == DW_CFA_advance_loc1 ? 1 :
				     op == DW_CFA_advance_loc2 ? 2 : 4;
			uint32_t d = 0;

			if ((size_t)(end - p) < n)
				goto other;
			for (unsigned i = 0; i < n; i++)	/* little-endian */
				d |= (uint32_t)p[i] << (8 * i);
			p += n;
			if (!advance(r, r->loc + d * c->code_align))
				return false;
			break;
		}
		case DW_CFA_offset_extended:
			if (!read_uleb128(&p, end, &reg) || !read_uleb128(&p, end, &u))
				goto other;
			if ((rr = tracked(r, &r->s, reg)))
				*rr = (struct reg_rule){ RULE_OFFSET,
							 factored((int64_t)u, c->data_align) };
			break;
		case DW_CFA_offset_extended_sf:
			if (!read_uleb128(&p, end, &reg) || !read_sleb128(&p, end, &s))
				goto other;
			if ((rr = tracked(r, &r->s, reg)))
				*rr = (struct reg_rule){ RULE_OFFSET, factored(s, c->data_align) };
			break;
		case DW_CFA_restore_extended:
			if (!read_uleb128(&p, end, &reg))
				goto other;
			if ((rr = tracked(r, &r->s, reg)))
				*rr = *tracked(r, &r->init, reg);
			break;
		case DW_CFA_undefined:
		case DW_CFA_same_value:
			if (!read_uleb128(&p, end, &reg))
				goto other;
			if ((rr = tracked(r, &r->s, reg)))
				*rr = (struct reg_rule){
					op == DW_CFA_undefined ? RULE_UNDEF : RULE_SAME, 0
				};
			break;
		case DW_CFA_register:
			if (!read_uleb128(&p, end, &reg) || !read_uleb128(&p, end, &u))
				goto other;
			if ((rr = tracked(r, &r->s, reg)))
				*rr = (struct reg_rule){ RULE_OTHER, 0 };
			break;
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
			if (!read_uleb128(&p, end, &reg) ||
			    (op == DW_CFA_val_offset ? !read_uleb128(&p, end, &u) : !read_sleb128(&p, end, &s)))
				goto other;
			if ((rr = tracked(r, &r->s, reg)))
				*rr = (struct reg_rule){ RULE_OTHER, 0 };
			break;
		case DW_CFA_remember_state:
			if (r->depth == STATES_MAX)
				goto other;
			r->stack[r->depth++] = r->s;
			break;
		case DW_CFA_restore_state:
			if (r->depth == 0)
				goto other;
			r->s = r->stack[--r->depth];
			break;
		case DW_CFA_def_cfa:
			if (!read_uleb128(&p, end, &reg) || !read_uleb128(&p, end, &u))
				goto other;
			r->s.cfa_reg = reg;
			r->s.cfa_off = (int64_t)u;
			r->s.cfa_set = true;
			break;
		case DW_CFA_def_cfa_sf:
			if (!read_uleb128(&p, end, &reg) || !read_sleb128(&p, end, &s))
				goto other;
			r->s.cfa_reg = reg;
			r->s.cfa_off = factored(s, c->data_align);
			r->s.cfa_set = true;
			break;
		case DW_CFA_def_cfa_register:
			if (!read_uleb128(&p, end, &reg) || !r->s.cfa_set)
				goto other;
			r->s.cfa_reg = reg;
			break;
		case DW_CFA_def_cfa_offset:
			if (!read_uleb128(&p, end, &u) || !r->s.cfa_set)
				goto other;
			r->s.cfa_off = (int64_t)u;
			break;
		case DW_CFA_def_cfa_offset_sf:
			if (!read_sleb128(&p, end, &s) || !r->s.cfa_set)
				goto other;
			r->s.cfa_off = factored(s, c->data_align);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			/* another register's: skipped; the tracked ones' are libdw's */
			if (!read_uleb128(&p, end, &reg) || !read_uleb128(&p, end, &u2) ||
			    u2 > (uint64_t)(end - p) || tracked(r, &r->s, reg))
				goto other;
			p += u2;
			break;
		case DW_CFA_GNU_args_size:
			if (!read_uleb128(&p, end, &u))
				goto other;
			break;
		default:	/* set_loc, def_cfa_expression, vendor ops */
			goto other;
		}
	}
	return true;
other:
	r->rc = 1;
	return false;
}

static int run_all(struct run *r, const uint8_t *insns, const uint8_t *end, uint64_t lo)
{
	r->s = (struct cfa_state){ 0 };
	r->depth = 0;
	r->loc = lo;
	r->rc = 0;
	/* the CIE's instructions may not advance */
	if (!run_insns(r, r->cie->init, r->cie->init_end))
		return r->rc ? r->rc : 1;
	if (r->loc != lo)
		return 1;
	r->init = r->s;
	if (!run_insns(r, insns, end))
		return r->rc;
	advance(r, r->hi);
	return r->rc;
}

int cfa_program_rows(const struct cfa_cie *cie, const uint8_t *insns, const uint8_t *end,
		     uint64_t lo, uint64_t hi, cfa_row_fn fn, void *arg)
{
	struct run r = { .cie = cie, .hi = hi };
	int rc;

	if (lo >= hi || cie->code_align == 0)
		return 1;
	/* a first run that emits nothing: libdw's either whole or not at all */
	rc = run_all(&r, insns, end, lo);
	if (rc)
		return rc;
	r.fn = fn;
	r.arg = arg;
	return run_all(&r, insns, end, lo);
}
