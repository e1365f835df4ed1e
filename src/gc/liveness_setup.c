// SPDX-License-Identifier: MIT
#include "gc/liveness_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alys_events.h"
#include "gc/gc_probes.h"
#include "lib/util.h"

#define say(lv, ...) say_unless((lv)->quiet, __VA_ARGS__)

/* Mark bytes when the layout was derived, else address reuse (announced:
 * it misses the blocks never handed out again). */
void liveness_choose(struct liveness_setup *lv, struct gc_probes *gp, bool off)
{
	/* Tests: ALYS_BPF_LAYOUT_TEST=reuse acts as if the layout could not
	 * be derived; =bad shifts hb_sz so that the run-time check fails;
	 * =flaky fails its first ALYS_LIVE_FAIL_N - 1 checks, as reads racing
	 * the collector would. */
	const char *test = getenv("ALYS_BPF_LAYOUT_TEST");

	if (off) {
		lv->mode = ALYS_LIVE_OFF;
		return;
	}
	if (test && !strcmp(test, "reuse") && gp->layout_ok) {
		gp->layout_ok = false;
		snprintf(gp->layout_why, sizeof(gp->layout_why),
			 "ALYS_BPF_LAYOUT_TEST=reuse is set");
	}
	if (test && !strcmp(test, "bad"))
		gp->layout.hb_sz_off += 8;
	if (test && !strcmp(test, "flaky"))
		lv->test_fail_first = ALYS_LIVE_FAIL_N - 1;
	if (gp->layout_ok && (gp->layout.log_hblk != ALYS_TRACK_HBLK_SHIFT ||
			      gp->layout.granule_shift != ALYS_TRACK_GRANULE_SHIFT)) {
		gp->layout_ok = false;
		snprintf(gp->layout_why, sizeof(gp->layout_why),
			 "its blocks are %u bytes of %u-byte granules, where the tracer "
			 "follows 4096 of 16", 1u << gp->layout.log_hblk,
			 1u << gp->layout.granule_shift);
	}
	/* A scan reads a header's flags and marks at once (bpf/live.h). */
	if (gp->layout_ok && (gp->layout.hb_flags_off >= gp->layout.hb_marks_off ||
			      gp->layout.hb_marks_off - gp->layout.hb_flags_off >=
			      ALYS_FLAGS_GAP_MAX)) {
		gp->layout_ok = false;
		snprintf(gp->layout_why, sizeof(gp->layout_why),
			 "its block headers have hb_flags at +0x%x and hb_marks at +0x%x, "
			 "where the tracer reads them at once from less than %d bytes apart",
			 gp->layout.hb_flags_off, gp->layout.hb_marks_off, ALYS_FLAGS_GAP_MAX);
	}
	if (gp->layout_ok) {
		lv->mode = ALYS_LIVE_MARKS;
		if (lv->verbose) {
			char d[512];

			gc_layout_describe(&gp->layout, d, sizeof(d));
			say(lv, "collector layout from %s: %s\n", gp->name, d);
		}
		return;
	}
	lv->mode = ALYS_LIVE_REUSE;
	say(lv, "notice: cannot read the collector's mark bytes (%s); frees are inferred "
	    "from address reuse only, which misses blocks never handed out again (~7%% of "
	    "reclaimed ones): in-use bytes are overestimated. Use a libgc 7.x/8.x build "
	    "exporting GC_is_marked, GC_size, GC_base, GC_arrays and GC_gc_no.\n",
	    gp->layout_why);
}

const char *liveness_mode_name(const struct liveness_setup *lv, uint32_t live_state)
{
	if (lv->mode == ALYS_LIVE_OFF)
		return "off";
	if (lv->mode == ALYS_LIVE_REUSE || live_state == ALYS_LIVE_FAILED)
		return "reuse";
	return "marks";
}

/* The BPF side checks the layout on the first blocks: say how it went. */
void liveness_check_state(struct liveness_setup *lv, uint32_t live_state,
			  uint32_t verified, uint32_t mismatched, const char *path)
{
	if (lv->mode != ALYS_LIVE_MARKS || live_state == lv->state_seen)
		return;
	lv->state_seen = live_state;
	if (live_state == ALYS_LIVE_VERIFIED && lv->verbose)
		say(lv, "collector layout verified on %u allocations (%u header reads that "
		    "did not check out, skipped): frees are read from mark bytes\n", verified,
		    mismatched);
	if (live_state == ALYS_LIVE_FAILED)
		say(lv, "notice: the block headers of %s do not match the layout derived from "
		    "its code (%u of the first %u allocations did not check out); frees are "
		    "inferred from address reuse only, which misses blocks never handed out "
		    "again: in-use bytes are overestimated. Please report this libgc build.\n",
		    path, mismatched, mismatched + verified);
}
