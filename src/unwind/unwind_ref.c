// SPDX-License-Identifier: MIT
/* Reference unwinder: the BPF program's algorithm, see unwind_ref.h. */
#include "unwind/unwind_ref.h"

const char *alys_unwind_stop_name(enum alys_unwind_stop s)
{
	switch (s) {
	case ALYS_UNWIND_STOP_MAX_FRAMES: return "max_frames";
	case ALYS_UNWIND_STOP_NO_MAPPING: return "no_mapping";
	case ALYS_UNWIND_STOP_END: return "end";
	case ALYS_UNWIND_STOP_OUTERMOST: return "outermost";
	case ALYS_UNWIND_STOP_UNSUPPORTED: return "unsupported";
	case ALYS_UNWIND_STOP_BP_UNKNOWN: return "bp_unknown";
	case ALYS_UNWIND_STOP_NO_PROGRESS: return "no_progress";
	case ALYS_UNWIND_STOP_READ_FAIL: return "read_fail";
	case ALYS_UNWIND_STOP_RA_ZERO: return "ra_zero";
	}
	return "?";
}

static const struct alys_unwind_mapping *find_mapping(const struct alys_unwind_mapping *maps,
						      size_t nmaps, uint64_t addr)
{
	size_t i;

	for (i = 0; i < nmaps; i++)
		if (addr >= maps[i].start && addr < maps[i].end && maps[i].table)
			return &maps[i];
	return NULL;
}

int alys_unwind_ref(const struct alys_unwind_mapping *maps, size_t nmaps,
		    const struct alys_unwind_regs *regs, alys_read_mem_fn read_mem,
		    void *ctx, uint64_t *ips, int max, enum alys_unwind_stop *stop)
{
	uint64_t pc = regs->ip, sp = regs->sp, bp = regs->bp;
	int bp_valid = 1;
	int n = 0;
	enum alys_unwind_stop why = ALYS_UNWIND_STOP_MAX_FRAMES;

	if (max <= 0)
		goto out;
	ips[n++] = pc;
	while (n < max) {
		uint64_t lookup = n == 1 ? pc : pc - 1;
		const struct alys_unwind_mapping *m = find_mapping(maps, nmaps, lookup);
		const struct alys_unwind_row *row;
		uint64_t cfa, ra;

		if (!m) {
			why = ALYS_UNWIND_STOP_NO_MAPPING;
			break;
		}
		row = alys_unwind_find_row(m->table, lookup - m->bias);
		if (!row || row->cfa_type == ALYS_CFA_END) {
			why = ALYS_UNWIND_STOP_END;
			break;
		}
		switch (row->cfa_type) {
		case ALYS_CFA_RSP:
			cfa = sp + (int64_t)row->cfa_offset;
			break;
		case ALYS_CFA_RBP:
			if (!bp_valid) {
				why = ALYS_UNWIND_STOP_BP_UNKNOWN;
				goto out;
			}
			cfa = bp + (int64_t)row->cfa_offset;
			break;
		case ALYS_CFA_PLT:
			cfa = sp + 8 + ((pc & 15) >= 11 ? 8 : 0);
			break;
		case ALYS_CFA_OUTERMOST:
			why = ALYS_UNWIND_STOP_OUTERMOST;
			goto out;
		default:
			why = ALYS_UNWIND_STOP_UNSUPPORTED;
			goto out;
		}
		if (cfa <= sp) {
			why = ALYS_UNWIND_STOP_NO_PROGRESS;
			break;
		}
		if (read_mem(ctx, cfa - 8, &ra, sizeof(ra))) {
			why = ALYS_UNWIND_STOP_READ_FAIL;
			break;
		}
		switch (row->rbp_type) {
		case ALYS_RBP_SAME:
			break;
		case ALYS_RBP_OFFSET:
			if (read_mem(ctx, cfa + (int64_t)row->rbp_offset, &bp, sizeof(bp))) {
				why = ALYS_UNWIND_STOP_READ_FAIL;
				goto out;
			}
			break;
		default:
			bp_valid = 0;
			break;
		}
		if (ra == 0) {
			why = ALYS_UNWIND_STOP_RA_ZERO;
			break;
		}
		sp = cfa;
		pc = ra;
		ips[n++] = pc;
	}
out:
	if (stop)
		*stop = why;
	return n;
}
