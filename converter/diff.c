// SPDX-License-Identifier: MIT
/*
 * Compares two traces site by site (model.h: named by function names, so two
 * builds of a program match): allocation count, allocated bytes (weights)
 * and live bytes at the end. --fail-above PCT turns growth of any site's
 * count or bytes beyond PCT percent (or a site that is new) into exit
 * status 1, for CI jobs that guard against allocation regressions. Live
 * bytes are shown but not judged: they depend on when the last collection
 * ran.
 */
#include "converter/diff.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/outbuf.h"
#include "profile/model.h"
#include "profile/symbolize.h"
#include "profile/trace.h"
#include "lib/util.h"

struct side {
	struct trace t;
	struct symbolizer *sym;
	char *kept;		/* its TRACE.debug, or NULL */
	struct model m;
	bool loaded;
};

struct row {
	const char *name;
	const struct model_site *old, *new_;
	uint64_t old_allocs, new_allocs, old_bytes, new_bytes;
	int64_t old_live, new_live;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s diff [--fail-above PCT] [-o OUT] OLD.alys NEW.alys\n"
		"\n"
		"Allocation count, allocated bytes and live bytes at the end, by site\n"
		"(the function that asked for the memory: the first frame that is neither\n"
		"the allocator's nor a constructor, by name), for the sites that changed,\n"
		"biggest byte change first.\n"
		"\n"
		"  --fail-above PCT  exit 1 if a site's allocation count or bytes grew by\n"
		"                    more than PCT percent, or a site is new\n"
		"  -o, --output OUT  write the table to OUT (default: standard output)\n"
		"  -h, --help        this text\n"
		"\n"
		"Exit status: 0, 1 (growth beyond --fail-above), 2 (usage or input error).\n",
		prog_name);
}

static int load(struct side *s, const char *path)
{
	if (trace_load(&s->t, path)) {
		trace_free(&s->t);
		return -1;
	}
	s->loaded = true;
	s->kept = symbolizer_kept_dir(path);
	s->sym = symbolizer_new(&s->t, &(struct symbolizer_options){ .want_dwarf = false,
								  .kept_dir = s->kept });
	model_build(&s->m, &s->t, s->sym, &(struct event_filter){ 0 }, 0, false);
	return 0;
}

static void unload(struct side *s)
{
	if (!s->loaded)
		return;
	model_free(&s->m);
	symbolizer_free(s->sym);
	free(s->kept);
	trace_free(&s->t);
}

/* Growth in percent; +inf for something from nothing. */
static double pct(uint64_t old, uint64_t new_)
{
	if (!old)
		return new_ ? INFINITY : 0;
	return ((double)new_ - (double)old) * 100.0 / (double)old;
}

static void fmt_pct(char *buf, size_t len, uint64_t old, uint64_t new_)
{
	double p = pct(old, new_);

	if (isinf(p))
		snprintf(buf, len, "new");
	else if (!old && !new_)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", p);
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static int by_change(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t dx = absdiff(x->old_bytes, x->new_bytes), dy = absdiff(y->old_bytes, y->new_bytes);
	uint64_t lx = (uint64_t)llabs(x->new_live - x->old_live);
	uint64_t ly = (uint64_t)llabs(y->new_live - y->old_live);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	if (lx != ly)
		return lx < ly ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void fill(struct row *r, const struct model_site *old, const struct model_site *new_)
{
	r->name = old ? old->name : new_->name;
	r->old_allocs = old ? old->allocs : 0;
	r->old_bytes = old ? old->s.alloc_space : 0;
	r->old_live = old ? (int64_t)old->s.inuse_space : 0;
	r->new_allocs = new_ ? new_->allocs : 0;
	r->new_bytes = new_ ? new_->s.alloc_space : 0;
	r->new_live = new_ ? (int64_t)new_->s.inuse_space : 0;
}

/* Both tables are sorted by name: merge them. */
static struct row *match_sites(const struct model *a, const struct model *b, size_t *nr)
{
	struct row *rows = xcalloc(a->nr_sites + b->nr_sites + 1, sizeof(*rows));
	size_t i = 0, j = 0, n = 0;

	while (i < a->nr_sites || j < b->nr_sites) {
		int c = i == a->nr_sites ? 1 : j == b->nr_sites ? -1 :
			strcmp(a->sites[i].name, b->sites[j].name);
		const struct model_site *o = c <= 0 ? &a->sites[i++] : NULL;
		const struct model_site *w = c >= 0 ? &b->sites[j++] : NULL;

		if ((o && o->allocs) || (w && w->allocs))
			fill(&rows[n++], o, w);
	}
	*nr = n;
	return rows;
}

static void totals(const struct model *m, uint64_t *allocs, uint64_t *bytes, int64_t *live)
{
	*allocs = m->alloc_events;
	*bytes = m->total.alloc_space;
	*live = (int64_t)m->total.inuse_space;
}

static void write_row(struct outbuf *o, const char *name, uint64_t oa, uint64_t na, uint64_t ob,
		      uint64_t nb, int64_t ol, int64_t nl)
{
	char pa[32], pb[32];

	fmt_pct(pa, sizeof(pa), oa, na);
	fmt_pct(pb, sizeof(pb), ob, nb);
	outbuf_printf(o, "%10" PRIu64 " %10" PRIu64 " %8s %12" PRIu64 " %12" PRIu64 " %8s %12" PRId64
		      " %12" PRId64 "  %s\n", oa, na, pa, ob, nb, pb, ol, nl, name);
}

static int compare(struct side *a, struct side *b, struct outbuf *o, double fail_above,
		   bool judge)
{
	uint64_t oa, ob, na, nb;
	int64_t ol, nl;
	size_t n, regressions = 0;
	struct row *rows = match_sites(&a->m, &b->m, &n);

	totals(&a->m, &oa, &ob, &ol);
	totals(&b->m, &na, &nb, &nl);
	qsort(rows, n, sizeof(*rows), by_change);
	outbuf_printf(o, "old: %s (liveness %s)\nnew: %s (liveness %s)\n\n", a->t.path,
		      trace_liveness_name(a->t.liveness), b->t.path,
		      trace_liveness_name(b->t.liveness));
	outbuf_printf(o, "%10s %10s %8s %12s %12s %8s %12s %12s  %s\n", "old_allocs", "new_allocs", "allocs",
		      "old_bytes", "new_bytes", "bytes", "old_live", "new_live", "site");
	write_row(o, "[total]", oa, na, ob, nb, ol, nl);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		if (r->old_allocs == r->new_allocs && r->old_bytes == r->new_bytes &&
		    r->old_live == r->new_live)
			continue;
		write_row(o, r->name, r->old_allocs, r->new_allocs, r->old_bytes, r->new_bytes,
			  r->old_live, r->new_live);
	}
	for (size_t i = 0; judge && i < n; i++) {
		const struct row *r = &rows[i];
		double pa = pct(r->old_allocs, r->new_allocs), pb = pct(r->old_bytes, r->new_bytes);

		if (pa > fail_above || pb > fail_above) {
			regressions++;
			if (!r->old_allocs)
				errx_msg("diff: new allocation site: %" PRIu64 " allocations, %" PRIu64
					 " bytes: %s", r->new_allocs, r->new_bytes, r->name);
			else
				errx_msg("diff: allocations %+.1f%%, bytes %+.1f%% (limit %+.1f%%): %s",
					 pa, pb, fail_above, r->name);
		}
	}
	free(rows);
	if (judge && regressions)
		errx_msg("diff: %zu site%s grew by more than %g%%", regressions,
			 regressions == 1 ? "" : "s", fail_above);
	return judge && regressions ? 1 : 0;
}

int diff_main(int argc, char **argv)
{
	enum { OPT_FAIL_ABOVE = 256 };
	static const struct option longopts[] = {
		{ "fail-above", required_argument, NULL, OPT_FAIL_ABOVE },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct side a = { 0 }, b = { 0 };
	const char *output = NULL;
	double fail_above = 0;
	bool judge = false;
	struct outbuf o;
	int c, fd = STDOUT_FILENO, ret = 2, err;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FAIL_ABOVE:
			errno = 0;
			fail_above = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(fail_above >= 0) || isinf(fail_above)) {
				errx_msg("--fail-above %s: expected a percentage >= 0, e.g. 5 or 2.5",
					 optarg);
				return 2;
			}
			judge = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		errx_msg("diff takes two traces, OLD.alys and NEW.alys (got %d)", argc - optind);
		usage(stderr);
		return 2;
	}
	unsetenv("DEBUGINFOD_URLS");
	if (load(&a, argv[optind]) || load(&b, argv[optind + 1]))
		goto out;
	if (output && strcmp(output, "-")) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			errx_msg("cannot create %s: %s; choose another -o OUT", output, strerror(errno));
			goto out;
		}
	}
	outbuf_init(&o, fd);
	ret = compare(&a, &b, &o, fail_above, judge);
	err = outbuf_flush(&o);
	outbuf_release(&o);
	if (fd != STDOUT_FILENO && close(fd) && !err)
		err = errno;
	if (err) {
		errx_msg("cannot write %s: %s", fd == STDOUT_FILENO ? "standard output" : output,
			 strerror(err));
		ret = 2;
	}
out:
	unload(&a);
	unload(&b);
	return ret;
}
