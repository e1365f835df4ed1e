// SPDX-License-Identifier: MIT
/*
 * Flame graph output: one self-contained interactive SVG, in the manner of
 * Brendan Gregg's flamegraph.pl, written here so that no Perl or Rust tool
 * is needed. The callers are at the bottom, the allocating Crystal code at
 * the top (the allocator's frames trimmed, as in pprof); width is allocated
 * bytes (or objects with --value objects), the unit in the title and every
 * tooltip. A small
 * embedded script gives tooltips, click to zoom, and a regex search that
 * highlights matches and shows their share.
 *
 * The stacks are merged into a tree first (frames compared by name, so the
 * same function reached through different return addresses is one frame),
 * children in name order as flamegraph.pl sorts them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "converter/output.h"
#include "converter/name_tree.h"
#include "lib/util.h"

#define IMAGE_WIDTH 1200
#define FRAME_HEIGHT 16
#define FONT_SIZE 12
#define XPAD 10
#define TOP_PAD 60	/* title, details and search lines */
#define BOTTOM_PAD 30
#define MIN_WIDTH 0.1	/* pixels: narrower frames are left out */

/* Text for XML: escaped, control bytes and invalid UTF-8 as '?'. */
static void xml_text(struct outbuf *o, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0;

	while (*p && chars < max_chars) {
		unsigned char c = *p;
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		bool valid = len > 0;

		for (size_t k = 1; valid && k < len; k++)
			valid = (p[k] & 0xc0) == 0x80;
		/* overlong and surrogate forms are rejected by XML parsers too */
		if (valid && len == 2 && c < 0xc2)
			valid = false;
		if (valid && len == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
			valid = false;
		if (valid && len == 4 && ((c == 0xf0 && p[1] < 0x90) || c > 0xf4 ||
					  (c == 0xf4 && p[1] >= 0x90)))
			valid = false;
		chars++;
		if (!valid) {
			outbuf_char(o, '?');
			p++;
			continue;
		}
		if (len > 1) {
			outbuf_write(o, p, len);
			p += len;
			continue;
		}
		switch (c) {
		case '&': outbuf_str(o, "&amp;"); break;
		case '<': outbuf_str(o, "&lt;"); break;
		case '>': outbuf_str(o, "&gt;"); break;
		case '"': outbuf_str(o, "&quot;"); break;
		default: outbuf_char(o, c < 0x20 || c == 0x7f ? '?' : (char)c);
		}
		p++;
	}
	if (*p)
		outbuf_str(o, "..");
}

static void outbuf_fixed(struct outbuf *o, double v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%.1f", v);

	outbuf_write(o, buf, (size_t)n);
}

/* flamegraph.pl's "hot" palette, seeded by the name so colours are stable. */
static void colour(struct outbuf *o, const char *name)
{
	uint64_t h = hash_u64(1469598103934665603ull);
	char buf[32];
	int n;

	for (const char *p = name; *p; p++)
		h = hash_u64(h ^ (unsigned char)*p);
	n = snprintf(buf, sizeof(buf), "rgb(%u,%u,%u)", 205 + (unsigned int)(h % 51),
		     (unsigned int)((h >> 8) % 231), (unsigned int)((h >> 16) % 56));
	outbuf_write(o, buf, (size_t)n);
}

static const char script[] =
	"var svg, frames, details, matchedtxt, unzoombtn, W, zoomed = null;\n"
	"function init(evt) {\n"
	"  svg = document.documentElement; frames = document.getElementById('frames');\n"
	"  details = document.getElementById('details').firstChild;\n"
	"  matchedtxt = document.getElementById('matched');\n"
	"  unzoombtn = document.getElementById('unzoom');\n"
	"  W = +svg.getAttribute('width');\n"
	"  for (var g of frames.children) {\n"
	"    g.addEventListener('mouseover', function() { details.nodeValue = this.firstChild.textContent; });\n"
	"    g.addEventListener('mouseout', function() { details.nodeValue = ' '; });\n"
	"    g.addEventListener('click', function() { zoom(this); });\n"
	"  }\n"
	"  document.getElementById('search').addEventListener('click', search_prompt);\n"
	"  unzoombtn.addEventListener('click', unzoom);\n"
	"  fit_all();\n"
	"}\n"
	"function fname(g) { var t = g.firstChild.textContent; return t.substring(0, t.lastIndexOf(' (')); }\n"
	"function rect(g) { return g.getElementsByTagName('rect')[0]; }\n"
	"function fit(g) {\n"
	"  var r = rect(g), t = g.getElementsByTagName('text')[0], w = +r.getAttribute('width');\n"
	"  var name = fname(g), n = Math.floor((w - 6) / (" "0.59 * " "12));\n"
	"  t.setAttribute('x', +r.getAttribute('x') + 3);\n"
	"  t.textContent = n < 3 ? '' : name.length <= n ? name : name.substring(0, n - 2) + '..';\n"
	"}\n"
	"function fit_all() { for (var g of frames.children) if (g.style.display != 'none') fit(g); }\n"
	"function place(g, x, w) { var r = rect(g); r.setAttribute('x', x); r.setAttribute('width', w); g.style.display = ''; }\n"
	"function zoom(node) {\n"
	"  var x = +node.getAttribute('data-x'), w = +node.getAttribute('data-w');\n"
	"  var y = +rect(node).getAttribute('y'), ratio = (W - 20) / w, e = 0.0001;\n"
	"  for (var g of frames.children) {\n"
	"    var gx = +g.getAttribute('data-x'), gw = +g.getAttribute('data-w');\n"
	"    var gy = +rect(g).getAttribute('y');\n"
	"    if (gy > y && gx <= x + e && gx + gw >= x + w - e) place(g, 10, W - 20);\n"
	"    else if (gy <= y && gx >= x - e && gx + gw <= x + w + e) place(g, 10 + (gx - x) * ratio, gw * ratio);\n"
	"    else g.style.display = 'none';\n"
	"  }\n"
	"  unzoombtn.style.opacity = 1; fit_all();\n"
	"}\n"
	"function unzoom() {\n"
	"  for (var g of frames.children) place(g, g.getAttribute('data-x'), g.getAttribute('data-w'));\n"
	"  unzoombtn.style.opacity = 0; fit_all();\n"
	"}\n"
	"function search_prompt() {\n"
	"  var term = prompt('Search for (regular expression):', '');\n"
	"  if (term != null) search(term);\n"
	"}\n"
	"function search(term) {\n"
	"  var re = new RegExp(term), matched = 0, seen = [], total = 0;\n"
	"  for (var g of frames.children) {\n"
	"    var r = rect(g), w = +g.getAttribute('data-w'), x = +g.getAttribute('data-x');\n"
	"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    if (+g.getAttribute('data-depth') == 0) total += w;\n"
	"    if (term != '' && re.test(fname(g))) {\n"
	"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"      /* count a match once, not again inside a matching ancestor */\n"
	"      if (!seen.some(function(s) { return x >= s[0] && x + w <= s[1]; })) { seen.push([x, x + w]); matched += w; }\n"
	"    } else r.setAttribute('fill', r.getAttribute('data-fill'));\n"
	"  }\n"
	"  matchedtxt.textContent = term == '' || !total ? ' ' : 'Matched: ' + (100 * matched / total).toFixed(1) + '%';\n"
	"}\n";

struct layout {
	struct outbuf *o;
	const struct name_tree *t;
	double scale;		/* pixels per unit of value */
	uint64_t total;
	const char *unit;
	uint32_t height;
};

static void frame(struct layout *l, uint32_t i, uint32_t depth, double x)
{
	const struct name_node *n = &l->t->n[i];
	struct outbuf *o = l->o;
	double w = (double)n->value * l->scale;
	double y = l->height - BOTTOM_PAD - (double)(depth + 1) * FRAME_HEIGHT;
	char pct[32];

	snprintf(pct, sizeof(pct), "%.2f", l->total ? 100.0 * (double)n->value / (double)l->total : 0);
	outbuf_str(o, "<g data-x=\"");
	outbuf_fixed(o, x);
	outbuf_str(o, "\" data-w=\"");
	outbuf_fixed(o, w);
	outbuf_str(o, "\" data-depth=\"");
	outbuf_u64(o, depth);
	outbuf_str(o, "\"><title>");
	xml_text(o, n->name, SIZE_MAX);
	outbuf_str(o, " (");
	outbuf_u64(o, n->value);
	outbuf_char(o, ' ');
	outbuf_str(o, l->unit);
	outbuf_str(o, ", ");
	outbuf_str(o, pct);
	outbuf_str(o, "%)</title><rect x=\"");
	outbuf_fixed(o, x);
	outbuf_str(o, "\" y=\"");
	outbuf_fixed(o, y);
	outbuf_str(o, "\" width=\"");
	outbuf_fixed(o, w);
	outbuf_str(o, "\" height=\"" "15" "\" fill=\"");
	colour(o, n->name);
	outbuf_str(o, "\" rx=\"2\" ry=\"2\"/><text x=\"");
	outbuf_fixed(o, x + 3);
	outbuf_str(o, "\" y=\"");
	outbuf_fixed(o, y + 11.5);
	outbuf_str(o, "\">");
	/* a first label; the script refits labels on load and zoom */
	if (w > 30)
		xml_text(o, n->name, (size_t)((w - 6) / (0.59 * FONT_SIZE)));
	outbuf_str(o, "</text></g>\n");
}

/* Depth-first without recursion: stacks can be hundreds of frames deep. */
static void frames(struct layout *l)
{
	struct item { uint32_t node, depth; double x; } *todo = NULL;
	size_t nr = 0, cap = 0;

	/* the root, "all", at the bottom */
	todo = grow_array(todo, &cap, 1, sizeof(*todo));
	todo[nr++] = (struct item){ 0, 0, XPAD };
	while (nr) {
		struct item it = todo[--nr];
		double x = it.x;

		if ((double)l->t->n[it.node].value * l->scale < MIN_WIDTH)
			continue;
		frame(l, it.node, it.depth, it.x);
		for (uint32_t c = l->t->n[it.node].first_child; c; c = l->t->n[c].next_sibling) {
			todo = grow_array(todo, &cap, nr + 1, sizeof(*todo));
			todo[nr++] = (struct item){ c, it.depth + 1, x };
			x += (double)l->t->n[c].value * l->scale;
		}
	}
	free(todo);
}

void write_flamegraph(struct model *m, struct outbuf *o, const struct output_options *opt)
{
	bool bytes = opt->value != VALUE_COUNT;	/* bytes by default, as pprof */
	const struct trace *t = m->t;
	struct name_tree tree;
	struct layout l = { .o = o, .t = &tree, .unit = bytes ? "bytes" : "objects" };
	const char *exe = t->hdr.exe.ptr ? t->hdr.exe.ptr : t->path;

	name_tree_init(&tree, "all", NULL);
	for (size_t b = 1; b < m->nr_buckets; b++) {
		const struct alloc_stats *st = &m->buckets[b].s;
		/* --at: what is in use at the end of the window, as memray's
		 * and heaptrack's peak flamegraphs */
		uint64_t v = opt->live_view ? (bytes ? st->inuse_space : st->inuse_objects) :
					      (bytes ? st->alloc_space : st->alloc_objects);
		if (!st->alloc_objects || st->alloc_space < opt->min_bytes || !v)
			continue;
		name_tree_add(&tree, m, b, v);
	}
	name_tree_sum(&tree);
	name_tree_sort(&tree);
	l.total = tree.n[0].value;
	l.scale = l.total ? (double)(IMAGE_WIDTH - 2 * XPAD) / (double)l.total : 0;
	l.height = TOP_PAD + BOTTOM_PAD + (tree.max_depth + 1) * FRAME_HEIGHT;

	outbuf_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		      "<svg version=\"1.1\" width=\"" );
	outbuf_u64(o, IMAGE_WIDTH);
	outbuf_str(o, "\" height=\"");
	outbuf_u64(o, l.height);
	outbuf_str(o, "\" onload=\"init(evt)\" viewBox=\"0 0 ");
	outbuf_u64(o, IMAGE_WIDTH);
	outbuf_char(o, ' ');
	outbuf_u64(o, l.height);
	outbuf_str(o, "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		      "<!-- written by alys_converter -f flamegraph (docs/FORMAT.md) -->\n"
		      "<style type=\"text/css\">\n"
		      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
		      "#title { text-anchor: middle; font-size: 17px; }\n"
		      "#search, #unzoom { cursor: pointer; }\n"
		      "#unzoom { opacity: 0; }\n"
		      "#frames > g { cursor: pointer; }\n"
		      "#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }\n"
		      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	outbuf_str(o, script);
	outbuf_str(o, "]]></script>\n<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" "
		      "fill=\"rgb(248,248,240)\"/>\n<text id=\"title\" x=\"");
	outbuf_u64(o, IMAGE_WIDTH / 2);
	outbuf_str(o, "\" y=\"24\">Allocation flame graph: ");
	xml_text(o, exe, 120);
	outbuf_str(o, "</text>\n<text x=\"");
	outbuf_u64(o, IMAGE_WIDTH / 2);
	outbuf_str(o, "\" y=\"42\" text-anchor=\"middle\">");
	outbuf_u64(o, l.total);
	outbuf_char(o, ' ');
	outbuf_str(o, l.unit);
	if (opt->live_view)
		outbuf_printf(o, " in use at %.6f s", (double)m->filter.to_ns / 1e9);
	else
		outbuf_str(o, " allocated");
	if (t->hdr.sample.ptr && strcmp(t->hdr.sample.ptr, "all")) {
		outbuf_str(o, " (estimated from sampling, ");
		xml_text(o, t->hdr.sample.ptr, 40);
		outbuf_char(o, ')');
	}
	outbuf_str(o, "</text>\n<text id=\"unzoom\" x=\"10\" y=\"24\">Reset Zoom</text>\n"
		      "<text id=\"search\" x=\"");
	outbuf_u64(o, IMAGE_WIDTH - 110);
	outbuf_str(o, "\" y=\"24\">Search</text>\n<text id=\"matched\" x=\"");
	outbuf_u64(o, IMAGE_WIDTH - 110);
	outbuf_str(o, "\" y=\"");
	outbuf_u64(o, l.height - 10);
	outbuf_str(o, "\"> </text>\n<text id=\"details\" x=\"10\" y=\"");
	outbuf_u64(o, l.height - 10);
	outbuf_str(o, "\"> </text>\n<g id=\"frames\">\n");
	if (l.total)
		frames(&l);
	outbuf_str(o, "</g>\n</svg>\n");
	name_tree_free(&tree);
}
