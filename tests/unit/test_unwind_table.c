// SPDX-License-Identifier: MIT
/*
 * Tests for src/unwind/unwind_table.c and src/unwind/unwind_ref.c.
 *
 * Build and run from the repository root:
 *   mkdir -p tests/build && gcc -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE \
 *     -Iinclude -Isrc src/unwind/unwind_table.c src/unwind/unwind_ref.c \
 *     tests/unit/test_unwind_table.c -ldw -lelf -o tests/build/test_unwind_table \
 *   && tests/build/test_unwind_table
 *
 * Extra ELF files given as arguments are compared with readelf as in (a).
 *
 * Needs readelf/objcopy/addr2line (binutils), gcc, crystal and gdb (with
 * Python); the fixtures (tests/unit/fixtures/unwind_chain.{c,cr},
 * unwind_fiber.cr) are compiled into tests/build/, and gdb runs them through
 * tests/unit/fixtures/capture.py.  A check whose tool is missing fails (it
 * is never skipped); gdb must be allowed to ptrace its child.
 *
 * (a) For libc.so.6, libgc.so.1, the C fixture and the Crystal fixture, every
 *     row `readelf --debug-dump=frames-interp` prints must agree with our
 *     table at that address (CFA rule, rbp rule, outermost), every FDE range
 *     must be covered and every gap between FDEs must be END.
 * (b) The fixtures are run under gdb until they stop themselves in a known
 *     call chain; the reference unwinder, run offline over the registers and
 *     stack gdb captured, must produce exactly gdb's backtrace pcs, and
 *     the fixture frames must symbolize to c, b, a, main.
 */
#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfa_program.h"
#include "unwind/leb128.h"
#include "unwind/unwind_ref.h"
#include "unwind/unwind_table.h"

static int passed, failed;

static void check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void check(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (cond)
		passed++;
	else
		failed++;
}

/* A check that cannot run is a failure: scripts/setup-debian.sh installs
 * every tool these tests need. */
static void skip(const char *what, const char *why)
{
	printf("not ok - %s: cannot run: %s (run scripts/setup-debian.sh)\n", what, why);
	failed++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool have_tool(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

static const char *basename_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* ---- (a) readelf comparison -------------------------------------------- */

struct re_row {
	uint64_t loc;
	bool debug;		/* from .debug_frame */
	bool signal;		/* CIE has 'S' */
	char cfa[32], rbp[32], ra[32];
	uint64_t fde_start, fde_end;
};

struct re_fde {
	uint64_t start, end;
	bool debug;
};

struct re_cie {
	uint64_t off;
	bool signal;
};

struct readelf_dump {
	struct re_row *rows;
	size_t nrows, caprows;
	struct re_fde *fdes;
	size_t nfdes, capfdes;
	struct re_cie *cies;
	size_t ncies, capcies;
};

#define PUSH(arr, n, cap, val)                                              \
	do {                                                                \
		if ((n) == (cap)) {                                         \
			(cap) = (cap) ? (cap) * 2 : 256;                    \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));     \
			if (!(arr)) {                                       \
				perror("realloc");                          \
				exit(2);                                    \
			}                                                   \
		}                                                           \
		(arr)[(n)++] = (val);                                       \
	} while (0)

static bool is_hex16(const char *s)
{
	int i;

	for (i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[16] == 0;
}

static int parse_readelf(const char *path, struct readelf_dump *d)
{
	char cmd[1024], line[4096];
	FILE *p;
	bool debug = false, in_fde = false, signal = false;
	int col_cfa = -1, col_rbp = -1, col_ra = -1;
	uint64_t fde_start = 0, fde_end = 0;

	memset(d, 0, sizeof(*d));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *tok[64], *save = NULL, *s;
		int n = 0;

		if (strstr(line, "Contents of the .debug_frame section")) {
			debug = true;
			in_fde = false;
			continue;
		}
		if (strstr(line, "Contents of the .eh_frame section")) {
			debug = false;
			in_fde = false;
			continue;
		}
		if (strstr(line, " CIE ")) {
			struct re_cie c;
			char *q = strchr(line, '"');

			c.off = strtoull(line, NULL, 16);
			c.signal = q && strchr(q + 1, '"') &&
				   memchr(q + 1, 'S', (size_t)(strchr(q + 1, '"') - q - 1));
			PUSH(d->cies, d->ncies, d->capcies, c);
			in_fde = false;
			continue;
		}
		if (strstr(line, " FDE ")) {
			char *pc = strstr(line, "pc="), *cie = strstr(line, "cie=");
			struct re_fde f;
			uint64_t cieoff;
			size_t i;

			if (!pc || !cie)
				continue;
			f.start = strtoull(pc + 3, &s, 16);
			f.end = strtoull(s + 2, NULL, 16);
			f.debug = debug;
			PUSH(d->fdes, d->nfdes, d->capfdes, f);
			cieoff = strtoull(cie + 4, NULL, 16);
			signal = false;
			for (i = 0; i < d->ncies; i++)
				if (d->cies[i].off == cieoff)
					signal = d->cies[i].signal;
			in_fde = true;
			fde_start = f.start;
			fde_end = f.end;
			col_cfa = col_rbp = col_ra = -1;
			continue;
		}
		/* "r10 (r10)" is one column: glue "(name)" to the token before */
		for (s = strtok_r(line, " \t\n", &save); s && n < 64;
		     s = strtok_r(NULL, " \t\n", &save)) {
			if (s[0] == '(' && n > 0)
				continue;
			tok[n++] = s;
		}
		if (!n || !in_fde)
			continue;
		if (!strcmp(tok[0], "LOC")) {
			int i;

			for (i = 0; i < n; i++) {
				if (!strcmp(tok[i], "CFA"))
					col_cfa = i;
				else if (!strcmp(tok[i], "rbp"))
					col_rbp = i;
				else if (!strcmp(tok[i], "ra"))
					col_ra = i;
			}
			continue;
		}
		if (is_hex16(tok[0]) && col_cfa >= 0) {
			struct re_row r;

			memset(&r, 0, sizeof(r));
			r.loc = strtoull(tok[0], NULL, 16);
			r.debug = debug;
			r.signal = signal;
			r.fde_start = fde_start;
			r.fde_end = fde_end;
			snprintf(r.cfa, sizeof(r.cfa), "%s", col_cfa < n ? tok[col_cfa] : "?");
			snprintf(r.rbp, sizeof(r.rbp), "%s",
				 col_rbp >= 0 && col_rbp < n ? tok[col_rbp] : "u");
			snprintf(r.ra, sizeof(r.ra), "%s",
				 col_ra >= 0 && col_ra < n ? tok[col_ra] : "u");
			PUSH(d->rows, d->nrows, d->caprows, r);
		}
	}
	/* readelf exits 1 on some warnings it does not print; judge by output */
	pclose(p);
	return d->nrows || d->nfdes ? 0 : -1;
}

static void free_readelf(struct readelf_dump *d)
{
	free(d->rows);
	free(d->fdes);
	free(d->cies);
}

static int cmp_fde(const void *a, const void *b)
{
	const struct re_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Is pc inside some .eh_frame FDE? (fdes sorted, eh only) */
static bool in_fdes(const struct re_fde *f, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* f[lo-1] is the last with start <= pc; ranges may overlap a little,
	 * look back a few */
	for (size_t i = lo; i-- > 0 && lo - i < 8;)
		if (pc >= f[i].start && pc < f[i].end)
			return true;
	return false;
}

/* Does our row agree with the readelf row?  Returns NULL or a reason. */
static const char *compare_row(const struct re_row *re, const struct alys_unwind_row *r,
			       char *buf, size_t len)
{
	long long off;
	char reg[8];
	int nch = 0;

	if (!r)
		return "no row";
	if (re->signal) {
		if (r->cfa_type != ALYS_CFA_UNSUPPORTED)
			return "signal frame not unsupported";
		return NULL;
	}
	if (!strcmp(re->ra, "u")) {
		if (r->cfa_type != ALYS_CFA_OUTERMOST)
			return "ra undefined but not outermost";
		return NULL;
	}
	if (strcmp(re->ra, "c-8")) {
		if (r->cfa_type != ALYS_CFA_UNSUPPORTED)
			return "ra not at c-8 but row supported";
		return NULL;
	}
	if (!strcmp(re->cfa, "exp")) {
		if (r->cfa_type != ALYS_CFA_PLT && r->cfa_type != ALYS_CFA_UNSUPPORTED)
			return "exp CFA not plt/unsupported";
		if (r->cfa_type == ALYS_CFA_UNSUPPORTED)
			return NULL;
	} else if (sscanf(re->cfa, "%7[a-z0-9]%lld%n", reg, &off, &nch) == 2 &&
		   re->cfa[nch] == 0 && (!strcmp(reg, "rsp") || !strcmp(reg, "rbp"))) {
		unsigned int want = !strcmp(reg, "rsp") ? ALYS_CFA_RSP : ALYS_CFA_RBP;

		if (r->cfa_type != want || r->cfa_offset != off) {
			snprintf(buf, len, "CFA %s but table has %s%+d", re->cfa,
				 alys_cfa_type_name(r->cfa_type), r->cfa_offset);
			return buf;
		}
	} else {
		if (r->cfa_type != ALYS_CFA_UNSUPPORTED)
			return "other CFA not unsupported";
		return NULL;
	}
	/* rbp */
	if (!strcmp(re->rbp, "u") || !strcmp(re->rbp, "s")) {
		/* unset (same value) or explicitly undefined */
		if (r->rbp_type == ALYS_RBP_OFFSET) {
			snprintf(buf, len, "rbp %s but table has offset %d", re->rbp,
				 r->rbp_offset);
			return buf;
		}
	} else if (re->rbp[0] == 'c' && sscanf(re->rbp + 1, "%lld", &off) == 1) {
		if (r->rbp_type != ALYS_RBP_OFFSET || r->rbp_offset != off) {
			snprintf(buf, len, "rbp %s but table has type %u offset %d",
				 re->rbp, r->rbp_type, r->rbp_offset);
			return buf;
		}
	} else if (r->rbp_type != ALYS_RBP_UNSUPPORTED) {
		snprintf(buf, len, "rbp %s but table has type %u", re->rbp, r->rbp_type);
		return buf;
	}
	return NULL;
}

static void check_against_readelf(const char *path, const char *label, double max_secs)
{
	struct alys_unwind_table t;
	struct readelf_dump d;
	char err[512], why[160];
	double t0, dt;
	size_t i, checked = 0, bad = 0, fde_bad = 0, gap_checked = 0, gap_bad = 0;
	struct re_fde *eh;
	size_t neh = 0, ncov;
	bool sorted_ok = true;

	if (access(path, R_OK) != 0) {
		skip(label, "file missing");
		return;
	}
	t0 = now();
	if (alys_unwind_table_build(path, &t, err, sizeof(err))) {
		check(false, "%s: build table: %s", label, err);
		return;
	}
	dt = now() - t0;
	printf("# %s: %s: %zu rows (%zu KiB) from %zu .eh_frame + %zu .debug_frame FDEs "
	       "in %.3f s; plt %zu, outermost %zu, unsupported %zu, rbp-unsupported %zu, "
	       "skipped FDEs %zu, cfi errors %zu\n",
	       label, path, t.nrows, t.nrows * sizeof(struct alys_unwind_row) / 1024,
	       t.stats.fde_eh, t.stats.fde_debug, dt, t.stats.rows_plt,
	       t.stats.rows_outermost, t.stats.rows_unsupported,
	       t.stats.rows_rbp_unsupported, t.stats.fde_skipped, t.stats.cfi_errors);
	check(dt < max_secs, "%s: table built in %.3f s (limit %.1f s)", label, dt, max_secs);

	for (i = 1; i < t.nrows; i++)
		if (t.rows[i].pc <= t.rows[i - 1].pc)
			sorted_ok = false;
	check(t.nrows >= 1 && sorted_ok && t.rows[t.nrows - 1].cfa_type == ALYS_CFA_END,
	      "%s: rows strictly sorted, last row END", label);
	for (i = 1; i < t.nrows; i++)
		if (t.rows[i].cfa_type == t.rows[i - 1].cfa_type &&
		    t.rows[i].cfa_offset == t.rows[i - 1].cfa_offset &&
		    t.rows[i].rbp_type == t.rows[i - 1].rbp_type &&
		    t.rows[i].rbp_offset == t.rows[i - 1].rbp_offset)
			break;
	check(i >= t.nrows, "%s: no two consecutive rows identical", label);

	if (parse_readelf(path, &d)) {
		if (!d.nfdes && t.nrows == 1) {
			check(true, "%s: no CFI, table is one END row", label);
			free_readelf(&d);
			alys_unwind_table_free(&t);
			return;
		}
		check(false, "%s: readelf --debug-dump=frames-interp failed", label);
		free_readelf(&d);
		alys_unwind_table_free(&t);
		return;
	}
	eh = calloc(d.nfdes + 1, sizeof(*eh));
	for (i = 0; i < d.nfdes; i++)
		if (!d.fdes[i].debug && d.fdes[i].end > d.fdes[i].start)
			eh[neh++] = d.fdes[i];
	qsort(eh, neh, sizeof(*eh), cmp_fde);

	for (i = 0; i < d.nrows; i++) {
		const struct re_row *re = &d.rows[i];
		const char *reason;

		/* a later row at the same address wins */
		if (i + 1 < d.nrows && d.rows[i + 1].loc == re->loc &&
		    d.rows[i + 1].fde_start == re->fde_start)
			continue;
		/* readelf prints a row an advance_loc puts at (or past) the FDE's
		 * end; those PCs belong to whatever follows */
		if (re->loc >= re->fde_end)
			continue;
		/* .debug_frame only counts where .eh_frame has nothing */
		if (re->debug && (re->fde_start == 0 || in_fdes(eh, neh, re->loc)))
			continue;
		checked++;
		reason = compare_row(re, alys_unwind_find_row(&t, re->loc), why, sizeof(why));
		if (reason) {
			if (bad < 10)
				printf("#   %s %#" PRIx64 ": readelf CFA %s rbp %s ra %s: %s\n",
				       re->debug ? "debug_frame" : "eh_frame", re->loc,
				       re->cfa, re->rbp, re->ra, reason);
			bad++;
		}
	}
	check(bad == 0 && (checked > 0 || !d.nrows), "%s: %zu readelf rows agree with the table (%zu differ)",
	      label, checked, bad);

	/* every FDE range covered; every gap between FDEs (eh + debug) END */
	for (i = 0; i < d.nfdes; i++) {
		const struct re_fde *f = &d.fdes[i];
		const struct alys_unwind_row *a, *b;

		if (f->end <= f->start || f->start == 0)
			continue;
		a = alys_unwind_find_row(&t, f->start);
		b = alys_unwind_find_row(&t, f->end - 1);
		if (!a || a->cfa_type == ALYS_CFA_END || !b || b->cfa_type == ALYS_CFA_END) {
			if (fde_bad < 5)
				printf("#   FDE %#" PRIx64 "..%#" PRIx64 " not covered\n",
				       f->start, f->end);
			fde_bad++;
		}
	}
	check(fde_bad == 0, "%s: all %zu FDE ranges covered", label, d.nfdes);

	ncov = 0;
	for (i = 0; i < d.nfdes; i++)
		if (d.fdes[i].end > d.fdes[i].start && d.fdes[i].start != 0)
			eh[ncov++] = d.fdes[i];	/* reuse: now eh + debug */
	qsort(eh, ncov, sizeof(*eh), cmp_fde);
	{
		uint64_t cov_end = 0;

		for (i = 0; i < ncov; i++) {
			if (i && eh[i].start > cov_end) {
				const struct alys_unwind_row *r = alys_unwind_find_row(&t, cov_end);

				gap_checked++;
				if (r && r->cfa_type != ALYS_CFA_END) {
					if (gap_bad < 5)
						printf("#   gap at %#" PRIx64 " has %s row\n", cov_end,
						       alys_cfa_type_name(r->cfa_type));
					gap_bad++;
				}
			}
			if (eh[i].end > cov_end)
				cov_end = eh[i].end;
		}
		if (ncov) {
			const struct alys_unwind_row *r = alys_unwind_find_row(&t, cov_end);

			gap_checked++;
			if (!r || r->cfa_type != ALYS_CFA_END)
				gap_bad++;
		}
	}
	check(gap_bad == 0, "%s: %zu gaps between/after FDEs are END", label, gap_checked);

	free(eh);
	free_readelf(&d);
	alys_unwind_table_free(&t);
}

/* ---- synthetic checks of lookup -------------------------------------- */

/* The rows from the FDEs' instructions run once (cfa_program.c) are the
 * rows libdw gives (ALYS_CFI_LIBDW), byte for byte, and most FDEs get them. */
static void check_same_as_libdw(const char *path, const char *label)
{
	struct alys_unwind_table a, b;
	char err[512];
	bool built;

	unsetenv("ALYS_CFI_LIBDW");
	built = !alys_unwind_table_build(path, &a, err, sizeof(err));
	check(built, "%s: table built%s%s", label, built ? "" : ": ", built ? "" : err);
	if (!built)
		return;
	setenv("ALYS_CFI_LIBDW", "1", 1);
	built = !alys_unwind_table_build(path, &b, err, sizeof(err));
	unsetenv("ALYS_CFI_LIBDW");
	check(built, "%s: table built by libdw only%s%s", label, built ? "" : ": ",
	      built ? "" : err);
	if (built) {
		check(a.nrows == b.nrows && !memcmp(a.rows, b.rows, a.nrows * sizeof(*a.rows)),
		      "%s: the same %zu rows as libdw's (%zu)", label, a.nrows, b.nrows);
		/* libdw's: the .plt's (a CFA expression), signal frames */
		check(b.stats.fde_interpreted == 0 &&
		      a.stats.fde_eh - a.stats.fde_interpreted <= 2 + a.stats.fde_eh / 100,
		      "%s: %zu of %zu FDEs' rows from their instructions, not libdw (all but "
		      "2 and 1%% at most)", label, a.stats.fde_interpreted, a.stats.fde_eh);
		alys_unwind_table_free(&b);
	}
	alys_unwind_table_free(&a);
}

struct hostile_rows {
	uint64_t lo, hi, last;
	size_t n, bad;
};

static int hostile_row(uint64_t start, uint64_t end, const struct alys_unwind_row *r,
		       void *arg)
{
	struct hostile_rows *h = arg;

	h->n++;
	if (start < h->last || start >= end || end > h->hi || r->cfa_type > ALYS_CFA_OUTERMOST)
		h->bad++;
	h->last = end;
	return 0;
}

/* One LEB128 reading for the section walk and the instructions: values up
 * to 64 bits, the sign of a short signed one, and an over-long or cut number
 * refused (where the walk once dropped the high bits). */
static void check_leb128(void)
{
	static const uint8_t max_u[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t long_u[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	static const uint8_t cut[] = { 0xe5, 0x8e };
	static const uint8_t u624485[] = { 0xe5, 0x8e, 0x26 };
	static const uint8_t s_m128[] = { 0x80, 0x7f };
	static const uint8_t s_min[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f };
	const uint8_t *p;
	uint64_t u = 0;
	int64_t s = 0;
	bool ok;

	p = u624485;
	ok = read_uleb128(&p, u624485 + 3, &u);
	check(ok && u == 624485 && p == u624485 + 3,
	      "LEB128: 0xe5 0x8e 0x26 is 624485, three bytes read (got %" PRIu64 ")", u);
	p = max_u;
	check(read_uleb128(&p, max_u + sizeof max_u, &u) && u == UINT64_MAX,
	      "LEB128: ten bytes give 2^64-1");
	p = long_u;
	check(!read_uleb128(&p, long_u + sizeof long_u, &u),
	      "LEB128: an eleven-byte number (zero, over-long) is refused");
	p = cut;
	check(!read_uleb128(&p, cut + sizeof cut, &u) && !read_sleb128(&(const uint8_t *){ cut }, cut + 2, &s),
	      "LEB128: a number cut by the section's end is refused");
	p = s_m128;
	ok = read_sleb128(&p, s_m128 + 2, &s);
	check(ok && s == -128, "LEB128: 0x80 0x7f is -128 (got %" PRId64 ")", s);
	p = s_min;
	ok = read_sleb128(&p, s_min + sizeof s_min, &s);
	check(ok && s == INT64_MIN,
	      "LEB128: ten signed bytes give -2^63 (got %" PRId64 ")", s);
}

/* An FDE's instructions are the traced program's bytes: random ones (mostly
 * the opcodes modelled, with random operands) give rows inside the FDE, in
 * order, or none; nothing read past the end (the sanitizer build). */
static void check_cfa_hostile(void)
{
	static const uint8_t ops[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
				       0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
				       0x12, 0x13, 0x14, 0x15, 0x16, 0x2e, 0x41, 0x86, 0x90,
				       0xc6, 0xd0 };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t runs = 200000, emitted = 0, bad = 0, outside = 0;

	for (size_t i = 0; i < runs; i++) {
		/* a CIE's usual start (CFA rsp+8, the return address at CFA-8),
		 * then random bytes */
		uint8_t init[12] = { DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1 }, fde[48], *buf;
		size_t ni, nf;
		struct hostile_rows h = { .lo = 0x1000, .hi = 0x1000 + (i % 97) + 1, .last = 0x1000 };
		struct cfa_cie cie;
		int rc;

		for (size_t k = 0; k < sizeof(init) + sizeof(fde); k++) {
			uint8_t byte;

			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			byte = seed & 1 ? ops[(seed >> 8) % sizeof(ops)] : (uint8_t)(seed >> 16);
			if (k >= sizeof(init))
				fde[k - sizeof(init)] = byte;
			else if (k >= 5)
				init[k] = byte;
		}
		ni = i % 3 ? 5 : seed % (sizeof(init) + 1);
		nf = (seed >> 8) % (sizeof(fde) + 1);
		/* exactly as long as the bytes: a read past them is caught */
		buf = malloc(ni + nf + 1);
		memcpy(buf, init, ni);
		memcpy(buf + ni, fde, nf);
		cie = (struct cfa_cie){ 1 + (seed >> 20) % 4, (seed >> 24) & 1 ? -8 : INT64_MIN,
					16, buf, buf + ni };
		rc = cfa_program_rows(&cie, buf + ni, buf + ni + nf, h.lo, h.hi, hostile_row, &h);
		if (rc == 0) {
			emitted++;
			bad += h.bad;
			outside += h.last != h.hi;	/* rows cover the FDE to its end */
		} else if (h.n) {
			bad++;				/* libdw's, yet rows came */
		}
		free(buf);
	}
	check(bad == 0 && outside == 0 && emitted > 0,
	      "CFA instructions: %zu random programs, %zu with rows, all inside their FDE, "
	      "in order, to its end (%zu bad, %zu short)", runs, emitted, bad, outside);
}

static void check_find_row(void)
{
	struct alys_unwind_row rows[] = {
		{ .pc = 0x1000, .cfa_type = ALYS_CFA_RSP, .cfa_offset = 8 },
		{ .pc = 0x1004, .cfa_type = ALYS_CFA_RSP, .cfa_offset = 16 },
		{ .pc = 0x1010, .cfa_type = ALYS_CFA_END },
		{ .pc = 0x2000, .cfa_type = ALYS_CFA_RBP, .cfa_offset = 16,
		  .rbp_type = ALYS_RBP_OFFSET, .rbp_offset = -16 },
		{ .pc = 0x2100, .cfa_type = ALYS_CFA_END },
	};
	struct alys_unwind_table t = { .rows = rows, .nrows = 5 };

	check(sizeof(struct alys_unwind_row) == 12, "struct alys_unwind_row is 12 bytes");
	check(alys_unwind_find_row(&t, 0xfff) == NULL, "find_row below the first row is NULL");
	check(alys_unwind_find_row(&t, 0x1000) == &rows[0] &&
	      alys_unwind_find_row(&t, 0x1003) == &rows[0] &&
	      alys_unwind_find_row(&t, 0x1004) == &rows[1] &&
	      alys_unwind_find_row(&t, 0x100f) == &rows[1] &&
	      alys_unwind_find_row(&t, 0x1010) == &rows[2] &&
	      alys_unwind_find_row(&t, 0x1fff) == &rows[2] &&
	      alys_unwind_find_row(&t, 0x20ff) == &rows[3] &&
	      alys_unwind_find_row(&t, 0x2100) == &rows[4] &&
	      alys_unwind_find_row(&t, 0xffffffffULL) == &rows[4] &&
	      alys_unwind_find_row(&t, 0x100000000ULL) == &rows[4],
	      "find_row picks the last row at or below pc");
}

/* The reference unwinder on a hand-made table and stack: every row kind and
 * every way to stop. */
static uint64_t fake_stack[32];		/* at FAKE_S */
#define FAKE_S 0x70000000ULL

static int read_fake(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < FAKE_S || addr + len > FAKE_S + sizeof(fake_stack))
		return -1;
	memcpy(buf, (char *)fake_stack + (addr - FAKE_S), len);
	return 0;
}

static void check_ref_synthetic(void)
{
	struct alys_unwind_row rows[] = {
		{ .pc = 0x1000, .cfa_type = ALYS_CFA_RSP, .cfa_offset = 8 },
		{ .pc = 0x1010, .cfa_type = ALYS_CFA_RBP, .cfa_offset = 16,
		  .rbp_type = ALYS_RBP_OFFSET, .rbp_offset = -16 },
		{ .pc = 0x1040, .cfa_type = ALYS_CFA_PLT },
		{ .pc = 0x1050, .cfa_type = ALYS_CFA_RSP, .cfa_offset = 16,
		  .rbp_type = ALYS_RBP_UNSUPPORTED },
		{ .pc = 0x1060, .cfa_type = ALYS_CFA_END },
		{ .pc = 0x1070, .cfa_type = ALYS_CFA_OUTERMOST },
		{ .pc = 0x1080, .cfa_type = ALYS_CFA_UNSUPPORTED },
		{ .pc = 0x1090, .cfa_type = ALYS_CFA_END },
	};
	struct alys_unwind_table t = { .rows = rows, .nrows = 8 };
	struct alys_unwind_mapping m = { .start = 0x401000, .end = 0x402000,
					 .bias = 0x400000, .table = &t };
	struct alys_unwind_regs r;
	enum alys_unwind_stop stop;
	uint64_t ips[8];
	int n;

	memset(fake_stack, 0, sizeof(fake_stack));
	fake_stack[1] = 0x401015;	/* S+0x08: ra of the PLT frame */
	fake_stack[8] = 0x12345;	/* S+0x40: saved rbp */
	fake_stack[9] = 0x401005;	/* S+0x48: ra, CFA = rbp + 16 = S+0x50 */
	fake_stack[10] = 0x401055;	/* S+0x50: ra, CFA = S+0x58 */
	fake_stack[12] = 0x401010;	/* S+0x60: ra; lookup 0x40100f: RSP+8 */
	fake_stack[13] = 0x401012;	/* S+0x68: ra; lookup 0x401011: RBP, bp lost */

	/* PLT at offset 11 (CFA = rsp+16), RBP with saved rbp, RSP, rbp lost,
	 * then the pc-1 lookup at a row boundary, then an RBP row: stop */
	r = (struct alys_unwind_regs){ .ip = 0x40104b, .sp = FAKE_S, .bp = FAKE_S + 0x40 };
	n = alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(n == 6 && ips[0] == 0x40104b && ips[1] == 0x401015 && ips[2] == 0x401005 &&
	      ips[3] == 0x401055 && ips[4] == 0x401010 && ips[5] == 0x401012 &&
	      stop == ALYS_UNWIND_STOP_BP_UNKNOWN,
	      "ref: plt/rbp/rsp rows, pc-1 lookup, lost rbp stops an RBP row (%d, %s)", n,
	      alys_unwind_stop_name(stop));
	n = alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 3, &stop);
	check(n == 3 && stop == ALYS_UNWIND_STOP_MAX_FRAMES, "ref: max frames (%d, %s)", n,
	      alys_unwind_stop_name(stop));
	/* PLT at offset 5: CFA = rsp+8, ra = *(S) = 0 */
	r = (struct alys_unwind_regs){ .ip = 0x401045, .sp = FAKE_S, .bp = 0 };
	n = alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(n == 1 && stop == ALYS_UNWIND_STOP_RA_ZERO, "ref: plt before push, ra 0 (%d, %s)",
	      n, alys_unwind_stop_name(stop));
	r.ip = 0x401060;
	n = alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(n == 1 && stop == ALYS_UNWIND_STOP_END, "ref: END row (%s)", alys_unwind_stop_name(stop));
	r.ip = 0x401070;
	alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(stop == ALYS_UNWIND_STOP_OUTERMOST, "ref: OUTERMOST row (%s)", alys_unwind_stop_name(stop));
	r.ip = 0x401080;
	alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(stop == ALYS_UNWIND_STOP_UNSUPPORTED, "ref: UNSUPPORTED row (%s)",
	      alys_unwind_stop_name(stop));
	r.ip = 0x300000;
	alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(stop == ALYS_UNWIND_STOP_NO_MAPPING, "ref: pc outside mappings (%s)",
	      alys_unwind_stop_name(stop));
	r = (struct alys_unwind_regs){ .ip = 0x401050, .sp = FAKE_S + 0xf8, .bp = 0 };
	alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(stop == ALYS_UNWIND_STOP_READ_FAIL, "ref: unreadable return address (%s)",
	      alys_unwind_stop_name(stop));
	r = (struct alys_unwind_regs){ .ip = 0x401010, .sp = FAKE_S, .bp = FAKE_S - 0x100 };
	alys_unwind_ref(&m, 1, &r, read_fake, NULL, ips, 8, &stop);
	check(stop == ALYS_UNWIND_STOP_NO_PROGRESS, "ref: CFA below sp (%s)",
	      alys_unwind_stop_name(stop));
}

static void check_errors(void)
{
	struct alys_unwind_table t;
	char err[512];
	int rc;

	rc = alys_unwind_table_build("/nonexistent/libfoo.so", &t, err, sizeof(err));
	check(rc == -1 && strstr(err, "/nonexistent/libfoo.so") && strstr(err, "No such file"),
	      "missing file reported with its name (%s)", err);
	rc = alys_unwind_table_build("/etc/passwd", &t, err, sizeof(err));
	check(rc == -1 && strstr(err, "/etc/passwd") && strstr(err, "ELF"),
	      "non-ELF reported (%s)", err);
}

/* A non-PIE binary linked above 4 GiB must be rejected. */
static void check_4g(void)
{
	const char *src = "tests/build/unwind_4g.c", *bin = "tests/build/unwind_4g.so";
	struct alys_unwind_table t;
	char err[512];
	FILE *f;
	int rc;

	f = fopen(src, "w");
	if (!f) {
		skip("object above 4 GiB rejected", "cannot write tests/build");
		return;
	}
	fputs("int f(int x) { return x + 1; }\n", f);
	fclose(f);
	if (system("gcc -shared -fPIC -Wl,-Ttext-segment=0x200000000 -o tests/build/unwind_4g.so "
		   "tests/build/unwind_4g.c 2>/dev/null") != 0) {
		skip("object above 4 GiB rejected", "gcc -Ttext-segment failed");
		return;
	}
	rc = alys_unwind_table_build(bin, &t, err, sizeof(err));
	check(rc == -1 && strstr(err, "4 GiB") && strstr(err, bin),
	      "object above 4 GiB rejected (%s)", err);
}

/* .eh_frame without .eh_frame_hdr: FDEs found by walking .eh_frame. */
static void check_no_hdr(void)
{
	struct alys_unwind_table a, b;
	char err[512];
	bool same;

	if (system("objcopy --remove-section=.eh_frame_hdr tests/build/unwind_chain_c "
		   "tests/build/unwind_chain_c_nohdr 2>/dev/null") != 0) {
		skip("table without .eh_frame_hdr", "objcopy failed");
		return;
	}
	if (alys_unwind_table_build("tests/build/unwind_chain_c", &a, err, sizeof(err))) {
		check(false, "no-hdr: %s", err);
		return;
	}
	if (alys_unwind_table_build("tests/build/unwind_chain_c_nohdr", &b, err, sizeof(err))) {
		check(false, "no-hdr: %s", err);
		alys_unwind_table_free(&a);
		return;
	}
	same = a.nrows == b.nrows && !memcmp(a.rows, b.rows, a.nrows * sizeof(*a.rows));
	check(same && a.nrows > 4, "table without .eh_frame_hdr identical (%zu rows)", b.nrows);
	alys_unwind_table_free(&a);
	alys_unwind_table_free(&b);
}

/* The .debug_frame fixture's table must not change when its .debug_frame is
 * compressed, or when the rest of the DWARF is stripped. */
static void check_debug_frame_variants(void)
{
	static const struct {
		const char *what, *cmd, *out;
	} v[] = {
		{ "compressed .debug_frame",
		  "objcopy --compress-debug-sections=zlib tests/build/unwind_chain_c_dbgframe "
		  "tests/build/unwind_chain_c_dbgz 2>/dev/null",
		  "tests/build/unwind_chain_c_dbgz" },
		{ ".debug_frame without .debug_info",
		  "objcopy --remove-section=.debug_info --remove-section=.debug_abbrev "
		  "--remove-section=.debug_line --remove-section=.debug_str "
		  "--remove-section=.debug_aranges --remove-section=.debug_rnglists "
		  "--remove-section=.debug_loclists --remove-section=.debug_line_str "
		  "tests/build/unwind_chain_c_dbgframe tests/build/unwind_chain_c_dbgonly "
		  "2>/dev/null",
		  "tests/build/unwind_chain_c_dbgonly" },
	};
	struct alys_unwind_table a, b;
	char err[512];
	size_t i;

	if (alys_unwind_table_build("tests/build/unwind_chain_c_dbgframe", &a, err, sizeof(err))) {
		check(false, "debug_frame variants: %s", err);
		return;
	}
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		bool same;

		if (system(v[i].cmd) != 0) {
			skip(v[i].what, "objcopy failed");
			continue;
		}
		if (alys_unwind_table_build(v[i].out, &b, err, sizeof(err))) {
			check(false, "%s: %s", v[i].what, err);
			continue;
		}
		same = a.nrows == b.nrows && !memcmp(a.rows, b.rows, a.nrows * sizeof(*a.rows));
		check(same && b.stats.fde_debug > 0, "%s: same table (%zu rows, %zu .debug_frame FDEs)",
		      v[i].what, b.nrows, b.stats.fde_debug);
		alys_unwind_table_free(&b);
	}
	alys_unwind_table_free(&a);
}

/* ---- (b) real unwinding -------------------------------------------------- */

struct capture {
	struct alys_unwind_regs regs;
	struct {
		uint64_t start, end, offset;
		char perms[8];
		char path[512];
	} maps[256];
	size_t nmaps;
	uint64_t frames[128];		/* gdb's NORMAL (physical) frames */
	char names[128][128];
	size_t nframes;
	size_t nsynthetic;		/* INLINE/TAILCALL frames left out */
	uint64_t stack_start;
	unsigned char *stack;
	size_t stack_len;
};

static int read_stack(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct capture *c = ctx;

	if (addr < c->stack_start || addr + len > c->stack_start + c->stack_len ||
	    addr + len < addr)
		return -1;
	memcpy(buf, c->stack + (addr - c->stack_start), len);
	return 0;
}

static int run_capture(const char *prog, struct capture *c)
{
	char cmd[2048], line[4096], dump[256];
	FILE *p;
	int ok_regs = 0;

	memset(c, 0, sizeof(*c));
	snprintf(dump, sizeof(dump), "tests/build/%s.stack", basename_of(prog));
	snprintf(cmd, sizeof(cmd),
		 "ALYS_STACK_DUMP=%s timeout 120 gdb -batch -nx "
		 "-x tests/unit/fixtures/capture.py --args %s 2>&1", dump, prog);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "REGS ", 5)) {
			ok_regs = sscanf(line + 5, "%" SCNx64 " %" SCNx64 " %" SCNx64,
					 &c->regs.ip, &c->regs.sp, &c->regs.bp) == 3;
		} else if (!strncmp(line, "MAP ", 4) && c->nmaps < 256) {
			char path[512] = "";
			int n = sscanf(line + 4, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %511s",
				       &c->maps[c->nmaps].start, &c->maps[c->nmaps].end,
				       c->maps[c->nmaps].perms, &c->maps[c->nmaps].offset, path);

			if (n >= 4) {
				snprintf(c->maps[c->nmaps].path, sizeof(c->maps[0].path), "%s", path);
				c->nmaps++;
			}
		} else if (!strncmp(line, "FRAME ", 6) && c->nframes < 128) {
			char type[32], name[128] = "";
			uint64_t pc;

			/* gdb synthesizes INLINE frames from DWARF inline info and
			 * TAILCALL frames from call-site info; CFI has neither. */
			if (sscanf(line + 6, "%" SCNx64 " %31s %127s", &pc, type, name) < 2)
				continue;
			if (!strcmp(type, "INLINE") || !strcmp(type, "TAILCALL")) {
				printf("#   gdb %s frame %#" PRIx64 " %s left out\n", type, pc, name);
				c->nsynthetic++;
				continue;
			}
			c->frames[c->nframes] = pc;
			snprintf(c->names[c->nframes], sizeof(c->names[0]), "%s", name);
			c->nframes++;
		} else if (!strncmp(line, "STACK ", 6)) {
			char file[256];
			FILE *f;

			if (sscanf(line + 6, "%" SCNx64 " %zu %255s", &c->stack_start,
				   &c->stack_len, file) != 3)
				continue;
			c->stack = malloc(c->stack_len);
			f = fopen(file, "rb");
			if (!f || !c->stack || fread(c->stack, 1, c->stack_len, f) != c->stack_len) {
				free(c->stack);
				c->stack = NULL;
			}
			if (f)
				fclose(f);
		}
	}
	pclose(p);
	return ok_regs && c->stack && c->nframes ? 0 : -1;
}

/* Function name of a file vaddr, through addr2line. */
static void symbolize(const char *path, uint64_t vaddr, char *out, size_t len)
{
	char cmd[1024];
	FILE *p;

	snprintf(out, len, "?");
	snprintf(cmd, sizeof(cmd), "addr2line -f -e '%s' %#" PRIx64 " 2>/dev/null", path, vaddr);
	p = popen(cmd, "r");
	if (!p)
		return;
	if (fgets(out, (int)len, p))
		out[strcspn(out, "\n")] = 0;
	pclose(p);
}

/* Runs prog under gdb, unwinds offline, compares with gdb.  want[] are the
 * function names, innermost first, the program's own frames must show;
 * want_stop is how the walk must end. */
static void check_unwind(const char *label, const char *prog, const char *const *want,
			 size_t nwant, enum alys_unwind_stop want_stop)
{
	struct capture *c = calloc(1, sizeof(*c));
	struct alys_unwind_table tables[32];
	char tpaths[32][512];
	size_t ntables = 0, i, j;
	struct alys_unwind_mapping maps[256];
	size_t nmaps = 0;
	uint64_t ips[128];
	enum alys_unwind_stop stop;
	int n;
	bool same;
	char err[512];
	size_t first_own = (size_t)-1, matched = 0;

	if (run_capture(prog, c)) {
		check(false, "%s: gdb capture of %s", label, prog);
		free(c);
		return;
	}
	/* tables for every file-backed executable mapping */
	for (i = 0; i < c->nmaps; i++) {
		size_t k;

		if (c->maps[i].perms[2] != 'x' || c->maps[i].path[0] != '/')
			continue;
		for (k = 0; k < ntables; k++)
			if (!strcmp(tpaths[k], c->maps[i].path))
				break;
		if (k == ntables) {
			if (ntables == 32)
				continue;
			if (alys_unwind_table_build(c->maps[i].path, &tables[k], err, sizeof(err))) {
				printf("# %s\n", err);
				continue;
			}
			snprintf(tpaths[k], sizeof(tpaths[k]), "%s", c->maps[i].path);
			ntables++;
		}
		maps[nmaps].start = c->maps[i].start;
		maps[nmaps].end = c->maps[i].end;
		maps[nmaps].table = &tables[k];
		if (alys_unwind_table_bias(&tables[k], c->maps[i].start, c->maps[i].offset,
					   &maps[nmaps].bias))
			continue;
		nmaps++;
	}

	/* gdb shows a last frame at pc 0 where we stop with RA_ZERO */
	if (c->nframes && c->frames[c->nframes - 1] == 0)
		c->nframes--;
	n = alys_unwind_ref(maps, nmaps, &c->regs, read_stack, c, ips, 128, &stop);
	printf("# %s: gdb %zu frames, reference unwinder %d frames, stop: %s\n", label,
	       c->nframes, n, alys_unwind_stop_name(stop));
	same = (size_t)n == c->nframes;
	for (i = 0; i < (size_t)n || i < c->nframes; i++) {
		const char *mark = (i < (size_t)n && i < c->nframes && ips[i] == c->frames[i])
					   ? "  " : "!!";

		if (i >= (size_t)n || i >= c->nframes || ips[i] != c->frames[i])
			same = false;
		printf("#   %s #%zu ours %#" PRIx64 " gdb %#" PRIx64 " %s\n", mark, i,
		       i < (size_t)n ? ips[i] : 0, i < c->nframes ? c->frames[i] : 0,
		       i < c->nframes ? c->names[i] : "");
	}
	check(same, "%s: reference unwinder pcs equal gdb's backtrace (%d frames)", label, n);
	check(stop == want_stop, "%s: unwinding ended with %s (want %s)", label,
	      alys_unwind_stop_name(stop), alys_unwind_stop_name(want_stop));

	/* symbolize our frames inside the program itself */
	for (i = 0; i < (size_t)n; i++) {
		for (j = 0; j < nmaps; j++) {
			uint64_t look = i ? ips[i] - 1 : ips[i];
			char name[256];

			if (look < maps[j].start || look >= maps[j].end)
				continue;
			if (strcmp(basename_of(tpaths[maps[j].table - tables]), basename_of(prog)))
				break;
			symbolize(prog, look - maps[j].bias, name, sizeof(name));
			if (first_own == (size_t)-1)
				first_own = i;
			if (matched < nwant && i == first_own + matched &&
			    !strcmp(name, want[matched]))
				matched++;
			printf("#   frame %zu: %s\n", i, name);
			break;
		}
	}
	check(matched == nwant, "%s: the program's innermost frames are %s .. %s in order",
	      label, want[0], want[nwant - 1]);
	for (i = 0; i < nwant && first_own + i < c->nframes; i++)
		if (strcmp(c->names[first_own + i], want[i]))
			break;
	check(i == nwant, "%s: gdb names the same frames", label);

	for (i = 0; i < ntables; i++)
		alys_unwind_table_free(&tables[i]);
	free(c->stack);
	free(c);
}

static bool newer(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return false;
	return sa.st_mtime >= sb.st_mtime;
}

int main(int argc, char **argv)
{
	static const char *const want_c[] = { "fx_c", "fx_b", "fx_a", "main" };
	static const char *const want_cr[] = { "level_c", "level_b", "level_a",
					       "__crystal_main" };
	const char *cbin = "tests/build/unwind_chain_c";
	const char *crbin = "tests/build/unwind_chain_cr";
	const char *dbgbin = "tests/build/unwind_chain_c_dbgframe";
	const char *fiberbin = "tests/build/unwind_fiber_cr";
	static const char *const want_fiber[] = { "level_c", "level_b", "level_a" };
	bool have_c, have_dbg, have_cr = false, have_fiber = false, have_gdb;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mkdir("tests/build", 0755) && errno != EEXIST) {
		perror("tests/build");
		return 2;
	}

	check_find_row();
	check_leb128();
	check_cfa_hostile();
	check_ref_synthetic();
	check_errors();

	have_c = system("gcc -O2 -fomit-frame-pointer -g -o tests/build/unwind_chain_c "
			"tests/unit/fixtures/unwind_chain.c") == 0;
	check(have_c, "C fixture compiled");
	/* the same without unwind tables: its own functions get only
	 * .debug_frame, crt1/crti/libc_nonshared still bring .eh_frame */
	have_dbg = system("gcc -O2 -fomit-frame-pointer -g -fno-asynchronous-unwind-tables "
			  "-fno-unwind-tables -o tests/build/unwind_chain_c_dbgframe "
			  "tests/unit/fixtures/unwind_chain.c") == 0;
	check(have_dbg, "C fixture with .debug_frame only compiled");
	if (have_tool("crystal")) {
		have_cr = newer(crbin, "tests/unit/fixtures/unwind_chain.cr") ||
			  system("crystal build -o tests/build/unwind_chain_cr "
				 "tests/unit/fixtures/unwind_chain.cr") == 0;
		check(have_cr, "Crystal fixture compiled");
		have_fiber = newer(fiberbin, "tests/unit/fixtures/unwind_fiber.cr") ||
			     system("crystal build -o tests/build/unwind_fiber_cr "
				    "tests/unit/fixtures/unwind_fiber.cr") == 0;
		check(have_fiber, "Crystal fiber fixture compiled");
	} else {
		skip("Crystal fixtures compiled", "no crystal");
	}

	check_4g();
	if (have_c)
		check_no_hdr();
	if (have_dbg)
		check_debug_frame_variants();

	check_same_as_libdw("/lib/x86_64-linux-gnu/libc.so.6", "libc");
	check_same_as_libdw("/lib/x86_64-linux-gnu/libgc.so.1", "libgc");
	if (have_c)
		check_same_as_libdw(cbin, "C fixture");
	if (have_cr)
		check_same_as_libdw(crbin, "Crystal fixture");
	if (have_tool("crystal"))
		check_same_as_libdw("/usr/bin/crystal", "Debian's crystal compiler");

	if (!have_tool("readelf")) {
		skip("readelf comparisons", "no readelf");
	} else {
		check_against_readelf("/lib/x86_64-linux-gnu/libc.so.6", "libc", 1.0);
		check_against_readelf("/lib/x86_64-linux-gnu/libgc.so.1", "libgc", 1.0);
		if (have_c)
			check_against_readelf(cbin, "C fixture", 1.0);
		if (have_dbg)
			check_against_readelf(dbgbin, "C .debug_frame fixture", 1.0);
		if (have_cr)
			check_against_readelf(crbin, "Crystal fixture", 1.0);
		/* more files to compare: tests/build/test_unwind_table FILE... */
		for (i = 1; i < argc; i++)
			check_against_readelf(argv[i], basename_of(argv[i]), 10.0);
	}

	have_gdb = have_tool("gdb") && have_tool("addr2line");
	if (!have_gdb) {
		skip("unwinding against gdb", "no gdb/addr2line");
	} else {
		if (have_c)
			check_unwind("C fixture", cbin, want_c, 4, ALYS_UNWIND_STOP_OUTERMOST);
		if (have_dbg)
			check_unwind("C .debug_frame fixture", dbgbin, want_c, 4,
				     ALYS_UNWIND_STOP_OUTERMOST);
		if (have_cr)
			check_unwind("Crystal fixture", crbin, want_cr, 4,
				     ALYS_UNWIND_STOP_OUTERMOST);
		if (have_fiber)
			check_unwind("Crystal fiber fixture", fiberbin, want_fiber, 3,
				     ALYS_UNWIND_STOP_RA_ZERO);
	}

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
