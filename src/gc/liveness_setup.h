/* SPDX-License-Identifier: MIT */
/*
 * How the daemon follows blocks to their death: the collector's mark bytes
 * where its layout was derived (gc_layout.c), else address reuse; and what
 * the BPF program's run-time check of that layout said (bpf/live.h). The
 * one owner of the liveness mode the trace records.
 */
#ifndef ALYS_LIVENESS_SETUP_H
#define ALYS_LIVENESS_SETUP_H

#include <stdbool.h>
#include <stdint.h>

struct gc_probes;

struct liveness_setup {
	int mode;			/* enum alys_live_mode */
	uint32_t state_seen;		/* enum alys_live_state last announced */
	uint32_t test_fail_first;	/* tests: checks taken as failed (bpf/live.h) */
	bool verbose, quiet;
};

/* off: --no-liveness, --empty-probes or --census alone. May change gp's
 * layout under ALYS_BPF_LAYOUT_TEST (tests). Says which mode and why. */
void liveness_choose(struct liveness_setup *lv, struct gc_probes *gp, bool off);
/* "off", "reuse" or "marks", given the BPF side's live_state. */
const char *liveness_mode_name(const struct liveness_setup *lv, uint32_t live_state);
/* Announces a change of the BPF side's check (verified, or failed), with
 * how many headers checked out and how many did not. */
void liveness_check_state(struct liveness_setup *lv, uint32_t live_state,
			  uint32_t verified, uint32_t mismatched, const char *path);

#endif
