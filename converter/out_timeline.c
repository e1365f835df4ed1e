// SPDX-License-Identifier: MIT
/*
 * -f timeline: a self-contained SVG chart of bytes over time. Top panel:
 * bytes allocated so far (total and for the top sites); bottom panel: live
 * bytes (total and the same sites). Points are the model's snapshots
 * (each collection read, or each new gc_no) and the end of the trace; the
 * top sites are the TOP_SERIES with the highest peak of live bytes. Sites
 * name their type through the constructor frame (`T::new`). The
 * collector's stop-the-world pauses are marks along the live panel's
 * bottom, each as wide as it lasted (a pixel at least), its length in its
 * tooltip. Where the trace has memory samples, a third panel stacks RSS's
 * parts over time (profile/gc_memory.h) under the RSS line, the heap's
 * growths as ticks along its bottom.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/output.h"
#include "profile/gc_memory.h"
#include "profile/model.h"
#include "lib/util.h"

#define TOP_SERIES 5
#define W 960
#define PANEL_H 260
#define LEFT 90
#define RIGHT 20
#define TOP 40
#define GAP 60
#define LEGEND_LINE 16

static const char *const colors[TOP_SERIES + 1] = {
	"#000000", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e",
};

struct point {
	uint64_t ts;
	double alloc[TOP_SERIES + 1];	/* [0]: total */
	double live[TOP_SERIES + 1];
};

struct timeline {
	const struct model_site *top[TOP_SERIES];
	size_t ntop;
	struct point *pts;
	size_t n;
	size_t live_n;		/* points with judged live bytes: pts[0..live_n) */
};

static int by_peak(const void *a, const void *b)
{
	const struct model_site *x = *(const struct model_site *const *)a;
	const struct model_site *y = *(const struct model_site *const *)b;

	if (x->peak_live != y->peak_live)
		return x->peak_live < y->peak_live ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The sites that peak highest, then a point per snapshot of the model. */
static void series(const struct model *m, struct timeline *tl)
{
	const struct model_site **v = xcalloc(m->nr_sites ? m->nr_sites : 1, sizeof(*v));
	struct point cur = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < m->nr_sites; i++)
		if (m->sites[i].peak_live > 0)
			v[n++] = &m->sites[i];
	qsort(v, n, sizeof(*v), by_peak);
	tl->ntop = n < TOP_SERIES ? n : TOP_SERIES;
	memcpy(tl->top, v, tl->ntop * sizeof(*v));
	free(v);

	/* A start point at zero, then the snapshots. */
	tl->pts = xcalloc(m->nr_snaps + 1, sizeof(*tl->pts));
	tl->pts[0].ts = m->t->hdr.start_ns;
	tl->n = 1;
	for (size_t i = 0; i < m->nr_snaps; i++) {
		const struct model_snapshot *sn = &m->snaps[i];
		size_t end = i + 1 < m->nr_snaps ? sn[1].first_change : m->nr_changes;

		for (size_t c = sn->first_change; c < end; c++)
			for (size_t k = 0; k < tl->ntop; k++)
				if (m->changes[c].site == (uint32_t)(tl->top[k] - m->sites)) {
					cur.alloc[k + 1] = (double)m->changes[c].alloc_space;
					cur.live[k + 1] = (double)m->changes[c].inuse_space;
				}
		cur.ts = sn->ts_ns > tl->pts[tl->n - 1].ts ? sn->ts_ns : tl->pts[tl->n - 1].ts;
		cur.alloc[0] = (double)sn->alloc_space;
		cur.live[0] = (double)sn->inuse_space;
		tl->pts[tl->n++] = cur;
	}
}

static void xml_text(struct outbuf *o, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': outbuf_str(o, "&amp;"); break;
		case '<': outbuf_str(o, "&lt;"); break;
		case '>': outbuf_str(o, "&gt;"); break;
		case '"': outbuf_str(o, "&quot;"); break;
		default:
			/* XML 1.0 allows no control characters but tab/newline */
			outbuf_char(o, (unsigned char)*s < 0x20 ? '?' : *s);
		}
	}
}

static void human(char *buf, size_t len, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (fabs(v) >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* One panel: axes, ticks and a polyline per series. */
static void panel(struct outbuf *o, const struct timeline *tl, bool live, int y0,
		  double tmax, const char *title)
{
	double vmax = 1;
	int plot_w = W - LEFT - RIGHT;
	size_t n = live ? tl->live_n : tl->n;

	for (size_t i = 0; i < n; i++) {
		const double *v = live ? tl->pts[i].live : tl->pts[i].alloc;

		for (size_t k = 0; k <= tl->ntop; k++)
			if (v[k] > vmax)
				vmax = v[k];
	}
	outbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", LEFT, y0 - 8, title);
	outbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
		      LEFT, y0, plot_w, PANEL_H);
	for (int k = 0; k <= 4; k++) {
		char lab[32];
		int y = y0 + PANEL_H - k * PANEL_H / 4;

		human(lab, sizeof(lab), vmax * k / 4);
		outbuf_printf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", LEFT - 6, y + 4, lab);
		outbuf_printf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.2f s</text>\n",
			      LEFT + k * plot_w / 4, y0 + PANEL_H + 16, tmax * k / 4);
	}
	for (size_t k = tl->ntop + 1; k-- > 0;) {
		outbuf_printf(o, "<polyline class=\"%s%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"",
			      live ? "live" : "alloc", k, colors[k], k ? "1.5" : "2.5");
		for (size_t i = 0; i < n; i++) {
			const double *v = live ? tl->pts[i].live : tl->pts[i].alloc;
			double t = (double)(tl->pts[i].ts - tl->pts[0].ts) / 1e9;

			outbuf_printf(o, "%.1f,%.1f ", LEFT + (tmax > 0 ? t / tmax : 0) * plot_w,
				      y0 + PANEL_H - (v[k] > 0 ? v[k] : 0) / vmax * PANEL_H);
		}
		outbuf_printf(o, "\"/>\n");
	}
}

#define PAUSE_H 10

/* The pauses along the bottom of the panel at y0 (t0: the chart's origin). */
static void pauses(struct outbuf *o, const struct trace *t, uint64_t t0, double tmax, int y0)
{
	int plot_w = W - LEFT - RIGHT;

	if (tmax <= 0)
		return;
	for (size_t i = 0; i < t->nr_pauses; i++) {
		const struct trace_pause *p = &t->pauses[i];
		double at = ((double)(int64_t)(p->stop_ns - t0)) / 1e9;
		double len = (double)(p->start_ns - p->stop_ns) / 1e9;
		double w = len / tmax * plot_w;

		if (at < 0 || at > tmax)
			continue;
		outbuf_printf(o, "<rect class=\"pause\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			      "height=\"%d\" fill=\"#d62728\" fill-opacity=\"0.7\"><title>GC pause "
			      "%.3f ms at %.3f s (collection %" PRIu32 ")</title></rect>\n",
			      LEFT + at / tmax * plot_w, y0 + PANEL_H - PAUSE_H, w < 1 ? 1 : w, PAUSE_H,
			      len * 1e3, at, p->gc_no);
	}
}

static const char *const part_colors[GC_MEM_PARTS] = {
	"#2ca02c", "#98df8a", "#9467bd", "#ff7f0e", "#c7c7c7", "#1f77b4",
};

/* RSS's parts stacked, sample by sample, under the RSS line; the heap's
 * growths as ticks along the bottom. */
static void memory_panel(struct outbuf *o, const struct trace *t, uint64_t t0, double tmax,
			 int y0)
{
	int plot_w = W - LEFT - RIGHT;
	double vmax = 1;
	size_t n = t->nr_memory;

	for (size_t i = 0; i < n; i++)
		if ((double)t->memory[i].rss > vmax)
			vmax = (double)t->memory[i].rss;
	outbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">Resident memory (RSS) "
		      "and its parts</text>\n", LEFT, y0 - 8);
	outbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		      "stroke=\"#888\"/>\n", LEFT, y0, plot_w, PANEL_H);
	for (int k = 0; k <= 4; k++) {
		char lab[32];
		int y = y0 + PANEL_H - k * PANEL_H / 4;

		human(lab, sizeof(lab), vmax * k / 4);
		outbuf_printf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
			      LEFT - 6, y + 4, lab);
		outbuf_printf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.2f s</text>\n",
			      LEFT + k * plot_w / 4, y0 + PANEL_H + 16, tmax * k / 4);
	}
	if (tmax <= 0)
		return;
#define X(ts) (LEFT + ((double)(int64_t)((ts) - t0) / 1e9 / tmax) * plot_w)
#define Y(v) (y0 + PANEL_H - (double)(v) / vmax * PANEL_H)
	/* each part's band: its top edge forwards, its bottom edge back */
	for (int k = GC_MEM_PARTS; k-- > 0;) {
		outbuf_printf(o, "<polygon class=\"mem%d\" fill=\"%s\" fill-opacity=\"0.8\" "
			      "points=\"", k, part_colors[k]);
		for (size_t i = 0; i < n; i++) {
			uint64_t p[GC_MEM_PARTS], top = 0;

			gc_memory_parts(&t->memory[i], p);
			for (int j = 0; j <= k; j++)
				top += p[j];
			outbuf_printf(o, "%.1f,%.1f ", X(t->memory[i].ts_ns), Y(top));
		}
		for (size_t i = n; i-- > 0;) {
			uint64_t p[GC_MEM_PARTS], bottom = 0;

			gc_memory_parts(&t->memory[i], p);
			for (int j = 0; j < k; j++)
				bottom += p[j];
			outbuf_printf(o, "%.1f,%.1f ", X(t->memory[i].ts_ns), Y(bottom));
		}
		outbuf_printf(o, "\"><title>%s</title></polygon>\n", gc_memory_part_names[k]);
	}
	outbuf_printf(o, "<polyline class=\"rss\" fill=\"none\" stroke=\"#000\" "
		      "stroke-width=\"2\" points=\"");
	for (size_t i = 0; i < n; i++)
		outbuf_printf(o, "%.1f,%.1f ", X(t->memory[i].ts_ns), Y(t->memory[i].rss));
	outbuf_printf(o, "\"/>\n");
	for (size_t i = 0; i < t->nr_grows; i++) {
		const struct trace_grow *g = &t->grows[i];
		char lab[32];

		if (g->ts_ns < t0 || (double)(g->ts_ns - t0) / 1e9 > tmax)
			continue;
		human(lab, sizeof(lab), (double)g->bytes);
		outbuf_printf(o, "<rect class=\"grow\" x=\"%.1f\" y=\"%d\" width=\"1\" "
			      "height=\"%d\" fill=\"#000\"><title>heap grew %s at %.3f s"
			      "</title></rect>\n", X(g->ts_ns), y0 + PANEL_H - PAUSE_H, PAUSE_H, lab,
			      (double)(g->ts_ns - t0) / 1e9);
	}
#undef X
#undef Y
}

void write_timeline(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	const struct trace *t = m->t;
	struct timeline tl = { 0 };
	bool judged = t->liveness != TRACE_LIVENESS_OFF;
	double tmax;
	int h, legend_y;
	bool mem;

	(void)opt;
	series(m, &tl);
	/* The last point is the end of the trace, not a collection read. */
	tl.live_n = judged && tl.n > 1 ? tl.n - 1 : tl.n;

	tmax = tl.n ? (double)(tl.pts[tl.n - 1].ts - tl.pts[0].ts) / 1e9 : 0;
	/* one time axis for every panel: to the last sample or growth too */
	for (size_t i = 0; tl.n && i < t->nr_memory + t->nr_grows; i++) {
		uint64_t ts = i < t->nr_memory ? t->memory[i].ts_ns : t->grows[i - t->nr_memory].ts_ns;
		double at = (double)(int64_t)(ts - tl.pts[0].ts) / 1e9;

		if (at > tmax)
			tmax = at;
	}
	mem = t->nr_memory > 0;
	legend_y = TOP + 2 * PANEL_H + GAP + 40 + (mem ? PANEL_H + GAP : 0);
	h = legend_y + (int)(tl.ntop + 2 + (mem ? GC_MEM_PARTS + 2 : 0)) * LEGEND_LINE + 20;
	outbuf_printf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		      "font-family=\"sans-serif\" font-size=\"12\">\n", W, h);
	outbuf_printf(o, "<title>alys-bpf timeline: ");
	xml_text(o, t->hdr.exe.ptr ? t->hdr.exe.ptr : "?");
	outbuf_printf(o, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	panel(o, &tl, false, TOP, tmax, "Allocated bytes (cumulative)");
	panel(o, &tl, true, TOP + PANEL_H + GAP, tmax,
	      judged ? "Live bytes (after each collection read)" :
	      "Live bytes (no inferred frees in this trace: upper bound)");
	if (tl.n)
		pauses(o, t, tl.pts[0].ts, tmax, TOP + PANEL_H + GAP);
	if (mem && tl.n)
		memory_panel(o, t, tl.pts[0].ts, tmax, TOP + 2 * (PANEL_H + GAP));
	if (judged)
		outbuf_printf(o, "<text class=\"note\" x=\"%d\" y=\"%d\" text-anchor=\"end\" "
			      "fill=\"#555\">%s</text>\n", W - RIGHT, TOP + PANEL_H + GAP - 8,
			      tl.live_n > 1 ? "ends at the last collection read: later blocks "
			      "are not judged yet" : "no collection was read");
	for (size_t k = 0; k <= tl.ntop; k++) {
		int y = legend_y + (int)k * LEGEND_LINE;

		outbuf_printf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>\n",
			      LEFT, y - 4, LEFT + 24, y - 4, colors[k]);
		outbuf_printf(o, "<text class=\"legend\" x=\"%d\" y=\"%d\">", LEFT + 30, y);
		xml_text(o, k ? tl.top[k - 1]->name : "[total]");
		outbuf_printf(o, "</text>\n");
	}
	if (t->nr_pauses) {
		int y = legend_y + (int)(tl.ntop + 1) * LEGEND_LINE;

		outbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"8\" fill=\"#d62728\" "
			      "fill-opacity=\"0.7\"/>\n", LEFT, y - 8);
		outbuf_printf(o, "<text class=\"legend\" x=\"%d\" y=\"%d\">GC pauses: %zu, the world "
			      "stopped (along the live panel's bottom, as wide as they lasted)</text>\n",
			      LEFT + 30, y, t->nr_pauses);
	}
	for (int k = 0; mem && k <= GC_MEM_PARTS; k++) {
		int y = legend_y + (int)(tl.ntop + 2 + k) * LEGEND_LINE;

		outbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"8\" fill=\"%s\"/>\n",
			      LEFT, y - 8, k < GC_MEM_PARTS ? part_colors[k] : "#000");
		outbuf_printf(o, "<text class=\"legend\" x=\"%d\" y=\"%d\">%s</text>\n", LEFT + 30,
			      y, k < GC_MEM_PARTS ? gc_memory_part_names[k] :
			      "RSS (line); ticks: the collector's heap grew");
	}
	outbuf_printf(o, "</svg>\n");
	free(tl.pts);
}
