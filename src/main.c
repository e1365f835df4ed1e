// SPDX-License-Identifier: MIT
/*
 * alys-bpf: trace the Boehm GC allocations of an unmodified Crystal program
 * with uprobes and write them to a .alys trace.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alys_events.h"
#include "alys_format.h"
#include "modes/http_endpoint.h"
#include "modes/heap_snapshot.h"
#include "agent/agent.h"
#include "modes/trace_one.h"
#include "lib/util.h"

#define ALYS_VERSION "0.1.0"

static void usage(FILE *out)
{
	fprintf(out,
"Usage: alys-bpf [OPTIONS] -- COMMAND [ARGS...]   launch COMMAND and trace it\n"
"       alys-bpf [OPTIONS] --pid PID              attach to a running process\n"
"       alys-bpf --all [--push URL] [OPTIONS]      every Crystal process on the host\n"
"\n"
"Records every GC_malloc, GC_malloc_atomic, GC_realloc and GC_free call of a\n"
"Crystal program, with its stack, into a .alys trace for alys_converter.\n"
"\n"
"Options:\n"
"  -o, --output FILE    trace file (default: ./<ISO-8601 local time>.alys; with\n"
"                       --http, no file unless -o is given)\n"
"      --debug-dir DIR  where the trace's mapped files go that this machine has\n"
"                       not by the path the target mapped them at (a container's\n"
"                       files, a binary replaced since it started), by build id,\n"
"                       for alys_converter (default: FILE.debug beside the trace,\n"
"                       where the converter looks)\n"
"  -p, --pid PID        attach to process PID; detach on Ctrl-C, SIGTERM or exit\n"
"      --unwind MODE    dwarf (default: .eh_frame tables, no frame pointers needed)\n"
"                       or fp (frame pointers, for code built with them)\n"
"      --max-frames N   stack depth, 1..%d (default %d); a deeper stack is cut\n"
"                       in its outermost N/8 frames and marked truncated\n"
"      --stack-cache N  stack prefixes the kernel remembers as sent (default\n"
"                       %d, 8 bytes of kernel memory each; 1K..16M). One\n"
"                       it forgot is sent again, never lost\n"
"      --sample MODE    all: record every call (default for a COMMAND);\n"
"                       refill: probe only the collector's slow paths, each\n"
"                       small-object free-list refill standing for the objects\n"
"                       it handed out (default with --pid: a busy server keeps\n"
"                       serving); bytes:N: sample about one call per N bytes\n"
"                       allocated (e.g. bytes:512K). Sampled events carry the\n"
"                       weight that keeps totals unbiased\n"
"      --duty PCT       with --sample refill: attach the probes for random\n"
"                       windows covering PCT%% of the time (1-100; default 20\n"
"                       with --pid, else 100), events weighted by the share of\n"
"                       the collector's own byte count the windows saw\n"
"      --ringbuf-size N ring buffer between the probes and alys-bpf, in bytes: a\n"
"                       power of two from 4K to 1G (default 64M; K/M/G suffixes).\n"
"                       Events that find it full are dropped and counted\n"
"      --no-liveness    do not follow blocks to the collection that frees them\n"
"                       (default: read the collector's mark bytes after each\n"
"                       collection and record inferred frees)\n"
"      --census[=N]     at the start of every (every Nth) collection, stop the\n"
"                       program, count the objects the last collection marked\n"
"                       live by Crystal type id, record them, resume. Without\n"
"                       --sample no allocation is probed; with it the converter\n"
"                       also shows what each type id was allocated as. With\n"
"                       --pid, the census starts at the next collection\n"
"      --heap-snapshot  with --pid: stop the process once, copy its heap and roots\n"
"                       (data, bss, thread stacks and registers), resume it and\n"
"                       write them (alys_converter -f heap analyses them).\n"
"                       While tracing, SIGUSR1 to alys-bpf takes one into the\n"
"                       trace (kill -USR1 ALYS_BPF_PID)\n"
"      --memory-every SECS  sample where the process's RSS is this often (default\n"
"                       1; 0: never): the collector's heap (live, free),\n"
"                       fibers' stacks, malloc, other memory, files. A sample\n"
"                       that takes long waits 20 times its cost for the next\n"
"      --interval SECS  every SECS seconds (e.g. 5 or 0.5), and at the end, print\n"
"                       the top sites by live bytes to stderr\n"
"      --http [HOST:]PORT  while tracing, serve the live profile in Go's pprof\n"
"                       conventions: /debug/pprof/allocs (?seconds=N: the next\n"
"                       N seconds), /debug/pprof/heap (in-use bytes first),\n"
"                       /metrics (Prometheus). HOST defaults to 127.0.0.1;\n"
"                       numeric addresses only ([::1]:PORT for IPv6); PORT 0:\n"
"                       any free port (printed). E.g. go tool pprof -http :8080\n"
"                       http://127.0.0.1:PORT/debug/pprof/allocs?seconds=30\n"
"      --http-allow-remote  let --http listen on a non-loopback address (the\n"
"                       profile shows the program's code to whoever connects)\n"
"\n"
"Host agent (--all):\n"
"      --all            trace every Crystal process (libgc and __crystal_main in\n"
"                       its executable): those running now and those started\n"
"                       later, each with --sample refill --duty 20 by default,\n"
"                       until SIGINT or SIGTERM. No trace files: profiles are\n"
"                       pushed (--push) and counted in /metrics (--http)\n"
"      --only-comm NAME, --exclude-comm NAME  only, or never, processes of this\n"
"                       name (/proc/PID/comm, which keeps 15 characters: a\n"
"                       longer NAME matches its first 15; repeat for more)\n"
"      --push URL       send each process's profile of every window to a\n"
"                       Pyroscope (e.g. http://pyroscope:4040) or Parca server\n"
"      --push-api API   pyroscope (POST URL/push.v1.PusherService/Push, default)\n"
"                       or parca (POST URL/api/profiles/writeraw)\n"
"      --push-every SECS  window length, 1-3600 (default 15)\n"
"      --push-queue N   profiles kept while the server fails (default 64,\n"
"                       1-100000); the oldest are dropped, counted\n"
"      --push-header 'Name: value'  add to every request (e.g. X-Scope-OrgID:\n"
"                       tenant); repeat for more\n"
"      --push-token-file FILE  send 'Authorization: Bearer' with the token on\n"
"                       FILE's first line\n"
"      --service NAME   service_name label (default: the executable's name)\n"
"\n"
"      --as-root        under sudo, run COMMAND as root instead of the invoking user\n"
"      --empty-probes   attach the same probes doing nothing (benchmark floor)\n"
"  -q, --quiet          print nothing but errors\n"
"  -v, --verbose        print probe placement and progress\n"
"  -h, --help           this help\n"
"  -V, --version        print the version\n"
"\n"
"Needs root (CAP_BPF and CAP_PERFMON). Exit status: the command's, when launched.\n",
		ALYS_MAX_FRAMES, ALYS_DEFAULT_FRAMES, ALYS_DEFAULT_STACK_CACHE);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || !*s || *end || *s == '-' || *out > max ? -1 : 0;
}

enum { OPT_UNWIND = 256, OPT_DUTY, OPT_MAX_FRAMES, OPT_AS_ROOT, OPT_EMPTY_PROBES, OPT_SAMPLE,
       OPT_RINGBUF_SIZE, OPT_NO_LIVENESS, OPT_INTERVAL, OPT_MEMORY_EVERY, OPT_CENSUS, OPT_STACK_CACHE,
       OPT_HEAP_SNAPSHOT, OPT_HTTP, OPT_HTTP_ALLOW_REMOTE, OPT_ALL, OPT_ONLY_COMM,
       OPT_EXCLUDE_COMM, OPT_PUSH, OPT_PUSH_API, OPT_PUSH_EVERY, OPT_PUSH_QUEUE,
       OPT_PUSH_HEADER, OPT_PUSH_TOKEN_FILE, OPT_SERVICE, OPT_DEBUG_DIR };

/* "all", "refill", or "bytes:N" with N in bytes, optionally with a k/K/KiB,
 * m/M/MiB suffix (powers of 1024). */
static int parse_sample(const char *s, int *mode, uint64_t *mean)
{
	unsigned long long n;
	char *end;

	*mean = 0;
	if (!strcmp(s, "all") || !strcmp(s, "refill")) {
		*mode = s[0] == 'a' ? SAMPLE_ALL : SAMPLE_REFILL;
		return 0;
	}
	*mode = SAMPLE_BYTES;
	if (strncmp(s, "bytes:", 6) || !isdigit((unsigned char)s[6]))
		return -1;
	errno = 0;
	n = strtoull(s + 6, &end, 10);
	if (errno)
		return -1;
	if (!strcmp(end, "k") || !strcmp(end, "K") || !strcmp(end, "KiB"))
		n <<= 10;
	else if (!strcmp(end, "m") || !strcmp(end, "M") || !strcmp(end, "MiB"))
		n <<= 20;
	else if (*end)
		return -1;
	/* The BPF side scales a 2^20 fixed-point log by the mean: keep it in
	 * 64 bits. */
	if (n == 0 || n > (1ULL << 36))
		return -1;
	*mean = n;
	return 0;
}

/* A power of two from 4 KiB to 1 GiB, with an optional K, M or G suffix
 * (powers of 1024): what BPF_MAP_TYPE_RINGBUF accepts. */
static int parse_ringbuf_size(const char *s, uint32_t *size)
{
	unsigned long long n;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || n > (1ULL << 30))
		return -1;
	if (!strcmp(end, "K") || !strcmp(end, "k"))
		n <<= 10;
	else if (!strcmp(end, "M") || !strcmp(end, "m"))
		n <<= 20;
	else if (!strcmp(end, "G") || !strcmp(end, "g"))
		n <<= 30;
	else if (*end)
		return -1;
	if (n < 4096 || n > (1ULL << 30) || (n & (n - 1)))
		return -1;
	*size = (uint32_t)n;
	return 0;
}

int main(int argc, char **argv)
{
	/* every message (lib/util.h) */
	prog_name = "alys-bpf";
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
		{ "as-root", no_argument, NULL, OPT_AS_ROOT },
		{ "empty-probes", no_argument, NULL, OPT_EMPTY_PROBES },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "duty", required_argument, NULL, OPT_DUTY },
		{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF_SIZE },
		{ "stack-cache", required_argument, NULL, OPT_STACK_CACHE },
		{ "no-liveness", no_argument, NULL, OPT_NO_LIVENESS },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "memory-every", required_argument, NULL, OPT_MEMORY_EVERY },
		{ "census", optional_argument, NULL, OPT_CENSUS },
		{ "heap-snapshot", no_argument, NULL, OPT_HEAP_SNAPSHOT },
		{ "http", required_argument, NULL, OPT_HTTP },
		{ "http-allow-remote", no_argument, NULL, OPT_HTTP_ALLOW_REMOTE },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "only-comm", required_argument, NULL, OPT_ONLY_COMM },
		{ "exclude-comm", required_argument, NULL, OPT_EXCLUDE_COMM },
		{ "push", required_argument, NULL, OPT_PUSH },
		{ "push-api", required_argument, NULL, OPT_PUSH_API },
		{ "push-every", required_argument, NULL, OPT_PUSH_EVERY },
		{ "push-queue", required_argument, NULL, OPT_PUSH_QUEUE },
		{ "push-header", required_argument, NULL, OPT_PUSH_HEADER },
		{ "push-token-file", required_argument, NULL, OPT_PUSH_TOKEN_FILE },
		{ "service", required_argument, NULL, OPT_SERVICE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct tracer_opts o = {
		.unwind = ALYS_UNWIND_DWARF,
		.max_frames = ALYS_DEFAULT_FRAMES,
		.stack_cache = ALYS_DEFAULT_STACK_CACHE,
		.memory_every_ns = 1000000000ull,
	};
	static struct sockaddr_storage http_addr;
	static struct agent_opts agent = {
		.push_opts = { .every_s = 15, .queue = 64 },
	};
	bool all = false, agent_opt = false;
	bool push_tuned = false;	/* an option of --push, given */
	const char *http = NULL;
	bool allow_remote = false;
	char err[512];
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "+o:p:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			if (parse_uint(optarg, 0x7fffffff, &v) || !v) {
				fail("--pid needs a process id, not '%s'\n", optarg);
				return 2;
			}
			o.pid = (pid_t)v;
			break;
		case OPT_DEBUG_DIR:
			o.debug_dir = optarg;
			break;
		case OPT_UNWIND:
			if (!strcmp(optarg, "dwarf")) {
				o.unwind = ALYS_UNWIND_DWARF;
			} else if (!strcmp(optarg, "fp")) {
				o.unwind = ALYS_UNWIND_FP;
			} else {
				fail("--unwind takes dwarf or fp, not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_MAX_FRAMES:
			if (parse_uint(optarg, ALYS_MAX_FRAMES, &v) || !v) {
				fail("--max-frames takes 1..%d, not '%s'\n",
					ALYS_MAX_FRAMES, optarg);
				return 2;
			}
			o.max_frames = (unsigned)v;
			break;
		case OPT_STACK_CACHE:
			if (parse_uint(optarg, 1 << 24, &v) || v < 1024) {
				fail("--stack-cache takes a number of stacks from "
					"1024 to 16777216, not '%s'\n", optarg);
				return 2;
			}
			o.stack_cache = (uint32_t)v;
			break;
		case OPT_AS_ROOT:
			o.as_root = true;
			break;
		case OPT_EMPTY_PROBES:
			o.empty_probes = true;
			break;
		case OPT_SAMPLE:
			if (parse_sample(optarg, &o.sample, &o.sample_bytes)) {
				fail("--sample takes all, refill or bytes:N (N bytes, "
					"e.g. bytes:65536, bytes:64K, bytes:1M), not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_DUTY: {
			char *end;
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || (*end && strcmp(end, "%")) || n < 1 || n > 100) {
				fail("--duty takes a percentage from 1 to 100 "
					"(e.g. 25), not '%s'\n", optarg);
				return 2;
			}
			o.duty_pct = (unsigned)n;
			break;
		}
		case OPT_RINGBUF_SIZE:
			if (parse_ringbuf_size(optarg, &o.ringbuf_size)) {
				fail("--ringbuf-size takes a power of two from "
					"4K to 1G (e.g. 65536, 64K, 32M), not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_INTERVAL: {
			char *end;
			double secs;

			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(secs >= 0.05) || secs > 86400) {
				fail("--interval takes seconds between 0.05 and "
					"86400 (e.g. 5 or 0.5), not '%s'\n", optarg);
				return 2;
			}
			o.interval_ns = (uint64_t)(secs * 1e9);
			break;
		}
		case OPT_MEMORY_EVERY: {
			char *end;
			double secs;

			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(secs == 0 || secs >= 0.05) ||
			    secs > 3600) {
				fail("--memory-every takes seconds between 0.05 and 3600 "
				     "(e.g. 1 or 0.2), or 0 for no memory samples, not '%s'\n",
				     optarg);
				return 2;
			}
			o.memory_every_ns = (uint64_t)(secs * 1e9);
			break;
		}
		case OPT_CENSUS: {
			char *end;
			unsigned long n = 1;

			if (optarg) {
				errno = 0;
				n = strtoul(optarg, &end, 10);
				if (errno || end == optarg || *end || n < 1 || n > 1000000) {
					fail("--census=N takes a number of collections "
						"from 1 to 1000000, not '%s'\n", optarg);
					return 2;
				}
			}
			o.census_every = (uint32_t)n;
			break;
		}
		case OPT_NO_LIVENESS:
			o.no_liveness = true;
			break;
		case OPT_HEAP_SNAPSHOT:
			o.heap_snapshot = true;
			break;
		case OPT_HTTP:
			http = optarg;
			break;
		case OPT_HTTP_ALLOW_REMOTE:
			allow_remote = true;
			break;
		case OPT_ALL:
			all = true;
			break;
		case OPT_ONLY_COMM:
		case OPT_EXCLUDE_COMM: {
			bool only = c == OPT_ONLY_COMM;
			unsigned *n = only ? &agent.n_only : &agent.n_exclude;

			if (*n == AGENT_MAX_COMM) {
				fail("at most %d --%s names\n", AGENT_MAX_COMM,
					only ? "only-comm" : "exclude-comm");
				return 2;
			}
			(only ? agent.only_comm : agent.exclude_comm)[(*n)++] = optarg;
			agent_opt = true;
			break;
		}
		case OPT_PUSH:
			agent.push = true;
			agent.push_opts.url = optarg;
			break;
		case OPT_PUSH_API:
			agent.push_opts.api = optarg;
			agent_opt = push_tuned = true;
			break;
		case OPT_PUSH_EVERY:
			if (parse_uint(optarg, 3600, &v) || !v) {
				fail("--push-every takes seconds from 1 to 3600, "
					"not '%s'\n", optarg);
				return 2;
			}
			agent.push_opts.every_s = (unsigned)v;
			agent_opt = push_tuned = true;
			break;
		case OPT_PUSH_QUEUE:
			if (parse_uint(optarg, 100000, &v) || !v) {
				fail("--push-queue takes a number of profiles "
					"from 1 to 100000, not '%s'\n", optarg);
				return 2;
			}
			agent.push_opts.queue = (unsigned)v;
			agent_opt = push_tuned = true;
			break;
		case OPT_PUSH_HEADER:
			if (agent.push_opts.nheaders == PUSH_MAX_HEADERS) {
				fail("at most %d --push-header\n",
					PUSH_MAX_HEADERS);
				return 2;
			}
			agent.push_opts.headers[agent.push_opts.nheaders++] = optarg;
			agent_opt = push_tuned = true;
			break;
		case OPT_PUSH_TOKEN_FILE:
			agent.push_opts.token_file = optarg;
			agent_opt = push_tuned = true;
			break;
		case OPT_SERVICE:
			agent.service = optarg;
			agent_opt = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("alys-bpf %s (trace format %d)\n", ALYS_VERSION, ALYS_FORMAT_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'alys-bpf --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	notes_quiet = o.quiet;	/* the trace model's notes (stripped libraries) */
	if (http) {
		if (http_parse_addr(http, allow_remote, &http_addr, err, sizeof(err))) {
			fail("%s\n", err);
			return 2;
		}
		if (o.heap_snapshot) {
			fail("--http serves a profile while tracing; "
				"--heap-snapshot only copies the heap once: give one of them\n");
			return 2;
		}
		o.http_addr = &http_addr;
	} else if (allow_remote) {
		fail("--http-allow-remote goes with --http HOST:PORT\n");
		return 2;
	}
	if (all) {
		const char *clash = o.argv ? "a command" : o.pid ? "--pid" : o.output ? "-o" :
				    o.heap_snapshot ? "--heap-snapshot" : o.census_every ? "--census" :
				    o.interval_ns ? "--interval" : NULL;

		if (clash) {
			fail("--all traces every Crystal process and writes "
				"no trace file: it does not take %s\n", clash);
			return 2;
		}
		if (!agent.push && push_tuned) {
			fail("--push-api, --push-every, --push-queue, "
				"--push-header and --push-token-file go with --push URL\n");
			return 2;
		}
		if (!agent.push && !http && !o.quiet)
			fail("note: --all without --push URL or --http PORT: "
				"the profiles go nowhere (processes are listed as they are "
				"traced)\n");
		agent.push_opts.quiet = o.quiet;
		agent.push_opts.verbose = o.verbose;
		o.agent = &agent;
		return agent_run(&o);
	}
	if (agent_opt || agent.push) {
		fail("--push, --service and the --only-comm/--exclude-comm "
			"filters go with --all\n");
		return 2;
	}
	if (o.heap_snapshot) {
		if (o.argv) {
			fail("--heap-snapshot copies a running process's heap: "
				"give --pid PID, not a command\n");
			return 2;
		}
		return heap_snapshot_run(&o);
	}
	if (o.duty_pct && o.sample != SAMPLE_REFILL && !(o.sample == SAMPLE_DEFAULT && o.pid)) {
		fail("--duty applies to --sample refill (the default with "
			"--pid) only\n");
		return 2;
	}
	if (!!o.argv == !!o.pid) {
		fail("%s", o.pid ? "give either --pid or a command, not both\n"
				 : "nothing to trace: give a command after -- or --pid PID\n");
		fprintf(stderr, "Try 'alys-bpf --help'.\n");
		return 2;
	}
	return trace_one_run(&o);
}
