// SPDX-License-Identifier: MIT
/*
 * alys_converter: turn a .alys trace into JSON or folded stacks.
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
#include "diff.h"
#include "output.h"
#include "symbolize.h"
#include "trace.h"
#include "util.h"

struct format {
	const char *name;
	const char *extension;
	bool want_lines;	/* file:line is only shown by JSON */
	void (*write)(const struct trace *, struct symbolizer *, struct outbuf *,
		      const struct output_options *);
};

static const struct format formats[] = {
	{ "json", ".json", true, write_json },
	{ "folded-stacks", ".folded", false, write_folded },
	{ "leaks", ".leaks.txt", false, write_leaks },
	{ "timeline", ".svg", false, write_timeline },
};

#define FORMAT_LIST "json, folded-stacks, leaks, timeline"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-f json|folded-stacks|leaks|timeline] [-o OUT] [--indent] [--depth N]\n"
		"                      [--value count|bytes] TRACE.alys\n"
		"\n"
		"Convert an alys-bpf trace (format version %d), symbolizing stacks with the\n"
		"binaries and libraries found at the traced paths on this machine.\n"
		"\n"
		"  -f, --format FMT   json (default), folded-stacks (for flamegraph.pl,\n"
		"                     inferno, speedscope) or leaks (in-use bytes by site\n"
		"                     at the end, leak suspects) or timeline (SVG chart\n"
		"                     of allocated and live bytes over time)\n"
		"  -o, --output OUT   output file; '-' for stdout. Default: TRACE with its\n"
		"                     extension replaced by .json or .folded\n"
		"      --indent       json: pretty-print\n"
		"      --depth N      keep only the N innermost frames of each stack\n"
		"      --value V      folded-stacks: count allocation events (default) or\n"
		"                     sum their bytes (weights)\n"
		"  -h, --help         this text\n"
		"\n"
		"       %s diff [--fail-above PCT] OLD.alys NEW.alys\n"
		"                     allocation changes by site ('diff --help')\n",
		PROG_NAME, ALYS_FORMAT_VERSION, PROG_NAME);
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

static int convert(const char *input, const char *output,
		   const struct format *fmt, const struct output_options *opt)
{
	struct symbolizer *sym = NULL;
	struct outbuf o;
	struct trace t;
	bool to_stdout = !strcmp(output, "-");
	int fd, ret = 1, err;

	if (!to_stdout && same_file(input, output)) {
		errx_msg("output %s is the input trace; choose another -o OUT", output);
		return 1;
	}
	if (trace_load(&t, input)) {
		trace_free(&t);
		return 1;
	}
	if (to_stdout) {
		fd = STDOUT_FILENO;
	} else {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			errx_msg("cannot create %s: %s; choose another -o OUT",
				 output, strerror(errno));
			trace_free(&t);
			return 1;
		}
	}
	sym = symbolizer_new(&t, fmt->want_lines);
	outbuf_init(&o, fd);
	fmt->write(&t, sym, &o, opt);
	err = outbuf_flush(&o);
	if (!to_stdout && close(fd) && !err)
		err = errno;
	if (err) {
		errx_msg("cannot write %s: %s", to_stdout ? "standard output" : output,
			 strerror(err));
		if (!to_stdout)
			unlink(output);	/* a partial file would look valid */
	} else {
		ret = 0;
	}
	outbuf_release(&o);
	symbolizer_free(sym);
	trace_free(&t);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_INDENT = 256, OPT_DEPTH, OPT_VALUE };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "indent", no_argument, NULL, OPT_INDENT },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct output_options opt = { 0 };
	const struct format *fmt = &formats[0];
	const char *output = NULL;
	char *default_out = NULL;
	int c, ret;

	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = find_format(optarg);
			if (!fmt) {
				errx_msg("unknown format '%s'; valid formats: " FORMAT_LIST,
					 optarg);
				return 2;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_INDENT:
			opt.indent = true;
			break;
		case OPT_DEPTH:
			if (parse_depth(optarg, &opt.depth))
				return 2;
			break;
		case OPT_VALUE:
			if (!strcmp(optarg, "count")) {
				opt.value = VALUE_COUNT;
			} else if (!strcmp(optarg, "bytes")) {
				opt.value = VALUE_BYTES;
			} else {
				errx_msg("unknown --value '%s'; valid values: count, bytes",
					 optarg);
				return 2;
			}
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
	/* Symbolization reads local files only: never fetch debug info over
	 * the network from inside a converter run. */
	unsetenv("DEBUGINFOD_URLS");
	if (!output)
		output = default_out = default_output(argv[optind], fmt->extension);
	ret = convert(argv[optind], output, fmt, &opt);
	free(default_out);
	return ret;
}
