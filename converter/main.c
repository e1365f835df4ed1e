// SPDX-License-Identifier: MIT
/*
 * alys_converter: turn a .alys trace into JSON, pprof, folded stacks, a
 * flamegraph or a report.
 * Options and dispatch only; see trace.c, symbolize.c, out_*.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alys_format.h"
#include "converter/diff.h"
#include "converter/output.h"
#include "profile/gc_pauses.h"
#include "profile/model.h"
#include "profile/progress.h"
#include "profile/symbolize.h"
#include "profile/trace.h"
#include "lib/util.h"

/* Options that select or shape what a format shows: a format that does
 * not honour one refuses it rather than ignoring it. */
enum {
	HONOURS_TIME = 1 << 0,		/* --time, --at */
	HONOURS_TYPE = 1 << 1,
	HONOURS_DEPTH = 1 << 2,
	HONOURS_MIN_BYTES = 1 << 3,
	HONOURS_VALUE = 1 << 4,
	HONOURS_INDENT = 1 << 5,
	HONOURS_MARKDOWN = 1 << 6,
	HONOURS_KEEP_ALLOC = 1 << 7,
	HONOURS_INLINE_STACKS = 1 << 8,
	HONOURS_LIMIT = 1 << 10,
	HONOURS_PAUSES = 1 << 11,	/* --pauses */
	SELECTS = HONOURS_TIME | HONOURS_TYPE,
	/* names types: type ids from the program's code (type_ids.h) */
	NAMES_TYPES = 1 << 9,
};

struct format {
	const char *name;
	const char *extension;
	void (*write)(struct model *, struct outbuf *, const struct output_options *);
	unsigned int honours;
};

static const struct format formats[] = {
	{ "json", ".json", write_json,
	  SELECTS | HONOURS_DEPTH | HONOURS_INDENT | HONOURS_INLINE_STACKS },
	{ "pprof", ".pb.gz", write_pprof,
	  SELECTS | HONOURS_DEPTH | HONOURS_MIN_BYTES | HONOURS_KEEP_ALLOC | HONOURS_PAUSES },
	{ "folded-stacks", ".folded", write_folded,
	  SELECTS | HONOURS_DEPTH | HONOURS_MIN_BYTES | HONOURS_VALUE | HONOURS_KEEP_ALLOC },
	{ "flamegraph", ".svg", write_flamegraph,
	  SELECTS | HONOURS_DEPTH | HONOURS_MIN_BYTES | HONOURS_VALUE | HONOURS_KEEP_ALLOC },
	{ "report", ".txt", write_report,
	  SELECTS | HONOURS_DEPTH | HONOURS_MIN_BYTES | HONOURS_MARKDOWN | NAMES_TYPES |
	  HONOURS_KEEP_ALLOC },
	/* Whole-trace analyses of liveness: every event counts. */
	{ "leaks", ".leaks.txt", write_leaks, 0 },
	{ "timeline", ".timeline.svg", write_timeline, 0 },
	{ "census", ".census.txt", write_census, NAMES_TYPES },
	/* A heap snapshot (alys-bpf --heap-snapshot): reachability from roots. */
	{ "heap", ".heap.txt", write_heap, NAMES_TYPES },
	{ "heap-graph", ".mmd", write_heap_graph,
	  NAMES_TYPES | HONOURS_TYPE | HONOURS_DEPTH | HONOURS_LIMIT },
};

/* The options given, as HONOURS_* bits, and their names. */
static const struct {
	unsigned int bit;
	const char *name;
} option_names[] = {
	{ HONOURS_TIME, "--time/--at" }, { HONOURS_TYPE, "--type" },
	{ HONOURS_DEPTH, "--depth" }, { HONOURS_MIN_BYTES, "--min-bytes" },
	{ HONOURS_VALUE, "--value" }, { HONOURS_INDENT, "--indent" },
	{ HONOURS_MARKDOWN, "--markdown" }, { HONOURS_KEEP_ALLOC, "--keep-allocator-frames" },
	{ HONOURS_INLINE_STACKS, "--inline-stacks" }, { HONOURS_LIMIT, "--limit" },
	{ HONOURS_PAUSES, "--pauses" },
};

/* 0, or complain about the first option given that fmt does not honour. */
static int check_honoured(const struct format *fmt, unsigned int given)
{
	char which[256] = "";

	for (size_t i = 0; i < sizeof(option_names) / sizeof(option_names[0]); i++) {
		if (!(given & option_names[i].bit) || (fmt->honours & option_names[i].bit))
			continue;
		for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++)
			if (formats[k].honours & option_names[i].bit)
				snprintf(which + strlen(which), sizeof(which) - strlen(which),
					 "%s%s", which[0] ? ", " : "", formats[k].name);
		errx_msg("-f %s does not honour %s (%s); formats that do: %s", fmt->name,
			 option_names[i].name,
			 fmt->honours ? "it would be ignored" :
					"it analyses the whole trace",
			 which);
		return -1;
	}
	return 0;
}

#define FORMAT_LIST "json, pprof, folded-stacks, flamegraph, report, leaks, timeline, census, heap, heap-graph"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-f FORMAT] [-o OUT] [options] TRACE.alys\n"
		"\n"
		"Convert an alys-bpf trace (format version %d or older), symbolizing stacks with the\n"
		"binaries and libraries found at the traced paths on this machine (or by\n"
		"build id in TRACE.alys.debug, where alys-bpf keeps a container's files, or\n"
		"under --debug-dir). Formats are described in docs/FORMAT.md.\n"
		"\n"
		"  -f, --format FMT   json (default): every event, and the stacks they refer to\n"
		"                     pprof: gzipped profile.proto for go tool pprof, Parca,\n"
		"                       Pyroscope (alloc/inuse objects and space)\n"
		"                     folded-stacks: for flamegraph.pl, inferno, speedscope\n"
		"                     flamegraph: interactive SVG (click to zoom, search)\n"
		"                     report: top allocation sites and types, as text\n"
		"                     leaks: in-use bytes by site at the end, leak\n"
		"                       suspects, object age, bytes by thread\n"
		"                     timeline: SVG chart of allocated and live bytes\n"
		"                     census: live objects by type id (alys-bpf --census)\n"
		"                     heap: a heap snapshot by type and retained bytes,\n"
		"                       the biggest retainers with their paths from a\n"
		"                       root (alys-bpf --heap-snapshot)\n"
		"                     heap-graph: with --type NAME, the paths from roots\n"
		"                       to objects of NAME as a mermaid graph\n"
		"  -o, --output OUT   output file; '-' for stdout. Default: TRACE with its\n"
		"                     extension replaced by .json, .pb.gz, .folded, .svg,\n"
		"                     .txt (.md with --markdown)\n"
		"  A format refuses (exit 2) an option below that it does not honour;\n"
		"  leaks, timeline and census always analyse the whole trace.\n"
		"      --indent       json: pretty-print\n"
		"      --inline-stacks  json: every event with its frames (the Alys shard's\n"
		"                     layout) instead of a table of stacks events refer to\n"
		"      --markdown     report: Markdown tables instead of plain text\n"
		"      --depth N      keep only the N innermost recorded frames of each stack\n"
		"      --value V      folded-stacks, flamegraph: sum allocated bytes (bytes,\n"
		"                     the default, as pprof) or count objects (objects)\n"
		"      --keep-allocator-frames  pprof, folded-stacks, flamegraph, report: keep\n"
		"                     the allocator's frames (GC_*, GC.malloc,\n"
		"                     __crystal_malloc*, ...) at the leaf; by default stacks\n"
		"                     start at the allocating Crystal code, as Go's heap\n"
		"                     profiles do\n"
		"      --pauses       pprof: the collector's stop-the-world pauses by the\n"
		"                     stack that triggered each (sample types gc_pauses/count,\n"
		"                     gc_pause/nanoseconds) instead of allocations\n"
		"      --min-bytes N  folded-stacks, flamegraph, report, pprof: leave out\n"
		"                     stacks (report: sites, types) that allocated fewer bytes\n"
		"      --type NAME    only allocations of Crystal type NAME (from the\n"
		"                     T::new, T#initialize or T.allocate frame); the report\n"
		"                     then lists their top call stacks\n"
		"      --time FROM..TO  only events in this window since the trace start;\n"
		"                     either end may be left out; units ns, us, ms, s\n"
		"                     (a bare number is seconds): --time 1.5s..3s\n"
		"      --at TIME      the state at TIME since the trace start (= --time ..TIME):\n"
		"                     e.g. the report's in-use sites at 2s; flamegraph: what\n"
		"                     is in use then; pprof: inuse_space first. --at peak:\n"
		"                     after the collection with the most bytes in use\n"
		"      --debug-dir DIR  also look for binaries and debug files here, by build\n"
		"                     id (DIR/xx/rest.debug, DIR/.build-id/xx/rest.debug) or\n"
		"                     by file name\n"
		"      --limit N      heap-graph: paths to at most N objects (default 10)\n"
		"      --no-symbols   do not symbolize: frames as [file+0xoffset] (fast)\n"
		"      --full-names   Crystal functions by their whole symbols\n"
		"                     (*Array(String)@Array(T)#push<String>:Array(String))\n"
		"                     instead of as Crystal prints them (Array(String)#push)\n"
		"  -q, --quiet        no notes and no progress bar (warnings stay)\n"
		"  -h, --help         this text\n"
		"\n"
		"       %s diff [--fail-above PCT] OLD.alys NEW.alys\n"
		"                     allocation changes by site ('diff --help')\n",
		prog_name, ALYS_FORMAT_VERSION, prog_name);
}

static const struct format *find_format(const char *name)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

/* "dir/trace.alys" -> "dir/trace.json"; a name without extension gains one. */
static char *default_output(const char *input, const char *extension)
{
	const char *base = strrchr(input, '/');
	const char *dot;
	size_t stem;
	char *out;

	base = base ? base + 1 : input;
	dot = strrchr(base, '.');
	stem = dot && dot != base ? (size_t)(dot - input) : strlen(input);
	out = xmalloc(stem + strlen(extension) + 1);
	memcpy(out, input, stem);
	strcpy(out + stem, extension);
	return out;
}

static int parse_depth(const char *arg, uint32_t *depth)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || v > UINT32_MAX || arg[0] == '-') {
		errx_msg("--depth %s: expected a number of frames (0 keeps all)", arg);
		return -1;
	}
	*depth = (uint32_t)v;
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

struct run {
	const char *input, *output;
	const struct format *fmt;
	struct output_options opt;
	struct event_filter filter;
	struct symbolizer_options sym;
	bool at_peak;		/* --at peak: the window ends at model_peak() */
};

/* The model of the events f selects, with types when the format or the
 * --type filter needs them. */
static void build_model(struct model *m, const struct trace *t, struct symbolizer *sym,
			const struct event_filter *f, const struct run *r)
{
	model_build(m, t, sym, f, r->opt.depth, (r->fmt->honours & NAMES_TYPES) || f->type);
}

/* --at peak: the window up to the collection after which the most bytes
 * were in use, found by a first model of the whole selection. */
static int window_to_peak(struct model *m, struct event_filter *f, const struct run *r)
{
	const struct model_snapshot *peak = model_peak(m);
	struct symbolizer *sym = m->sym;
	const struct trace *t = m->t;

	if (!peak) {
		errx_msg("--at peak: %s has no point where bytes in use are known "
			 "(no collection, no end); give --at TIME", r->input);
		return -1;
	}
	f->has_to = true;
	f->to_ns = (int64_t)(peak->ts_ns - t->hdr.start_ns);
	model_free(m);
	build_model(m, t, sym, f, r);
	return 0;
}

static int convert(const struct run *r)
{
	struct symbolizer *sym = NULL;
	struct symbolizer_options so = r->sym;
	char *kept;
	struct event_filter filter = r->filter;
	struct model m;
	struct outbuf o;
	struct trace t;
	bool to_stdout = !strcmp(r->output, "-");
	int fd, ret = 1, err;

	if (!to_stdout && same_file(r->input, r->output)) {
		errx_msg("output %s is the input trace; choose another -o OUT", r->output);
		return 1;
	}
	if (trace_load(&t, r->input)) {
		trace_free(&t);
		return 1;
	}
	if (to_stdout) {
		fd = STDOUT_FILENO;
	} else {
		fd = open(r->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			errx_msg("cannot create %s: %s; choose another -o OUT",
				 r->output, strerror(errno));
			trace_free(&t);
			return 1;
		}
	}
	so.kept_dir = kept = symbolizer_kept_dir(r->input);
	sym = symbolizer_new(&t, &so);
	build_model(&m, &t, sym, &r->filter, r);
	if (r->at_peak && window_to_peak(&m, &filter, r)) {
		model_free(&m);
		symbolizer_free(sym);
		free(kept);
		trace_free(&t);
		if (!to_stdout)
			close(fd);
		return 1;
	}
	m.keep_allocator_frames = r->opt.keep_allocator_frames;
	if (r->filter.type && !m.alloc_events && r->fmt->write != write_heap_graph)
		warnx_msg("no allocation of type '%s' in %s; the report format lists the "
			  "types found", r->filter.type, r->input);
	if (r->opt.pprof_values == PPROF_PAUSES) {
		struct gc_pause_summary ps;

		if (!t.nr_pauses)
			warnx_msg("%s has no GC pause records (traced by an older alys-bpf, or "
				  "GC_stop_world was not found): the profile is empty", r->input);
		gc_pauses_summarize(&m, &ps);
		gc_pauses_as_buckets(&m, &ps);
		gc_pauses_free(&ps);
	}
	outbuf_init(&o, fd);
	r->fmt->write(&m, &o, &r->opt);
	err = outbuf_flush(&o);
	if (!to_stdout && close(fd) && !err)
		err = errno;
	if (err) {
		errx_msg("cannot write %s: %s", to_stdout ? "standard output" : r->output,
			 strerror(err));
		if (!to_stdout)
			unlink(r->output);	/* a partial file would look valid */
	} else {
		ret = 0;
	}
	outbuf_release(&o);
	model_free(&m);
	symbolizer_free(sym);
	free(kept);
	trace_free(&t);
	return ret;
}

/* "1.5s", "200ms", "10us", "7ns", "2" (seconds) -> ns; -1 if malformed. */
static int parse_duration(const char *s, size_t len, int64_t *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
	};
	char buf[64], *end;
	double v;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (end == buf || errno || v < 0)
		return -1;
	/* bounded in ns, whatever the unit: 22464342052ns is 22 s */
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			if (v * units[i].scale > 9e18)
				return -1;
			*ns = (int64_t)(v * units[i].scale + 0.5);
			return 0;
		}
	return -1;
}

static int parse_time(const char *arg, struct event_filter *f)
{
	const char *dots = strstr(arg, "..");

	if (!dots || !strcmp(arg, ".."))
		goto bad;
	if (dots > arg) {
		if (parse_duration(arg, (size_t)(dots - arg), &f->from_ns))
			goto bad;
		f->has_from = true;
	}
	if (dots[2]) {
		if (parse_duration(dots + 2, strlen(dots + 2), &f->to_ns))
			goto bad;
		f->has_to = true;
	}
	if (f->has_from && f->has_to && f->from_ns > f->to_ns)
		goto bad;
	return 0;
bad:
	errx_msg("--time %s: expected FROM..TO since the trace start, e.g. 0.5s..2s, "
		 "100ms.. or ..3s (units ns, us, ms, s; FROM <= TO)", arg);
	return -1;
}

static int parse_bytes(const char *arg, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-') {
		errx_msg("--min-bytes %s: expected a number of bytes", arg);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum {
		OPT_INDENT = 256, OPT_DEPTH, OPT_VALUE, OPT_MARKDOWN, OPT_MIN_BYTES,
		OPT_TYPE, OPT_TIME, OPT_AT, OPT_DEBUG_DIR, OPT_NO_SYMBOLS, OPT_FULL_NAMES, OPT_KEEP_ALLOC,
		OPT_INLINE_STACKS, OPT_LIMIT, OPT_PAUSES,
	};
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "indent", no_argument, NULL, OPT_INDENT },
		{ "markdown", no_argument, NULL, OPT_MARKDOWN },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "min-bytes", required_argument, NULL, OPT_MIN_BYTES },
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "at", required_argument, NULL, OPT_AT },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
		{ "full-names", no_argument, NULL, OPT_FULL_NAMES },
		{ "keep-allocator-frames", no_argument, NULL, OPT_KEEP_ALLOC },
		{ "inline-stacks", no_argument, NULL, OPT_INLINE_STACKS },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "pauses", no_argument, NULL, OPT_PAUSES },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run r = { .fmt = &formats[0], .sym = { .want_dwarf = true } };
	unsigned int given = 0;
	char *default_out = NULL;
	struct stat st;
	int c, ret;

	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "f:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			r.fmt = find_format(optarg);
			if (!r.fmt) {
				errx_msg("unknown format '%s'; valid formats: " FORMAT_LIST,
					 optarg);
				return 2;
			}
			break;
		case 'o':
			r.output = optarg;
			break;
		case OPT_INDENT:
			r.opt.indent = true;
			given |= HONOURS_INDENT;
			break;
		case OPT_MARKDOWN:
			r.opt.markdown = true;
			given |= HONOURS_MARKDOWN;
			break;
		case OPT_DEPTH:
			given |= HONOURS_DEPTH;
			if (parse_depth(optarg, &r.opt.depth))
				return 2;
			break;
		case OPT_VALUE:
			given |= HONOURS_VALUE;
			if (!strcmp(optarg, "objects") || !strcmp(optarg, "count")) {
				r.opt.value = VALUE_COUNT;
			} else if (!strcmp(optarg, "bytes")) {
				r.opt.value = VALUE_BYTES;
			} else {
				errx_msg("unknown --value '%s'; valid values: bytes, objects (or count)",
					 optarg);
				return 2;
			}
			break;
		case OPT_MIN_BYTES:
			given |= HONOURS_MIN_BYTES;
			if (parse_bytes(optarg, &r.opt.min_bytes))
				return 2;
			break;
		case OPT_LIMIT: {
			char *end;
			unsigned long v;

			given |= HONOURS_LIMIT;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || !v || v > 100000) {
				errx_msg("--limit %s: expected a number of objects, 1 to 100000", optarg);
				return 2;
			}
			r.opt.limit = (uint32_t)v;
			break;
		}
		case OPT_TYPE:
			given |= HONOURS_TYPE;
			if (!*optarg) {
				errx_msg("--type needs a Crystal type name, e.g. --type Point");
				return 2;
			}
			r.filter.type = optarg;
			break;
		case OPT_TIME:
			given |= HONOURS_TIME;
			if (r.filter.has_from || r.filter.has_to || r.at_peak) {
				errx_msg("give one of --time and --at");
				return 2;
			}
			if (parse_time(optarg, &r.filter))
				return 2;
			break;
		case OPT_AT: {
			given |= HONOURS_TIME;
			/* The state at TIME: what was allocated and freed before it. */
			char *range;

			if (r.filter.has_from || r.filter.has_to || r.at_peak) {
				errx_msg("give one of --time and --at");
				return 2;
			}
			r.opt.live_view = true;
			if (!strcmp(optarg, "peak")) {
				r.at_peak = true;
				break;
			}
			if (asprintf(&range, "..%s", optarg) < 0)
				return 2;
			ret = parse_time(range, &r.filter);
			free(range);
			if (ret)
				return 2;
			break;
		}
		case OPT_DEBUG_DIR:
			if (stat(optarg, &st) || !S_ISDIR(st.st_mode)) {
				errx_msg("--debug-dir %s: not a directory; give the directory "
					 "holding the binaries or their .debug files", optarg);
				return 2;
			}
			r.sym.debug_dir = optarg;
			break;
		case OPT_INLINE_STACKS:
			r.opt.inline_stacks = true;
			given |= HONOURS_INLINE_STACKS;
			break;
		case OPT_KEEP_ALLOC:
			r.opt.keep_allocator_frames = true;
			given |= HONOURS_KEEP_ALLOC;
			break;
		case OPT_PAUSES:
			r.opt.pprof_values = PPROF_PAUSES;
			given |= HONOURS_PAUSES;
			break;
		case OPT_FULL_NAMES:
			r.sym.full_names = true;
			break;
		case OPT_NO_SYMBOLS:
			r.sym.no_symbols = true;
			r.sym.want_dwarf = false;
			break;
		case 'q':
			notes_quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		errx_msg(optind == argc ? "no trace given: name one .alys file"
					: "more than one trace given: convert one at a time");
		usage(stderr);
		return 2;
	}
	if (check_honoured(r.fmt, given))
		return 2;
	if (r.fmt->write == write_heap_graph && !r.filter.type) {
		errx_msg("-f heap-graph draws the paths to one type: give --type NAME (-f heap "
			 "lists the types)");
		return 2;
	}
	/* Symbolization reads local files only: never fetch debug info over
	 * the network from inside a converter run. */
	unsetenv("DEBUGINFOD_URLS");
	progress_enable(!notes_quiet && isatty(STDERR_FILENO));
	r.input = argv[optind];
	if (!r.output)
		r.output = default_out = default_output(
			r.input, r.fmt->write == write_report && r.opt.markdown ? ".md"
										  : r.fmt->extension);
	ret = convert(&r);
	free(default_out);
	return ret;
}
