#!/usr/bin/env bash
# bench/http_live.sh: does rendering the live profile stall the probes'
# consumer? (issue 21). bench/workloads/http_json.cr under wrk (server on
# CPU 1, wrk on CPU 0), attached with --pid --http, for SECS seconds per run,
# in two sampling modes (the default, refill --duty 20, and --sample all,
# the heaviest event stream), each without a client and with one fetching
# /debug/pprof/allocs back to back. Prints per run: the server's requests/s,
# events read, events lost (ring buffer full), profiles fetched and their
# latency (median, 95th percentile, max).
# Then the same on many deep stacks: tests/programs/deep_stacks.cr (PATHS
# distinct stacks of ~100 frames, a full trace) launched with --http, alone
# and with the back-to-back client: its run time, events, lost events and
# the profile's latency (each render symbolizes the stacks new since the
# last).
#   bench/http_live.sh [SECS [PATHS]]   (as root, after make; 8, 262144)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-8}
PATHS=${2:-262144}
ALYS=$ROOT/bin/alys-bpf
W=$(mktemp -d /tmp/alys-http-live.XXXXXX)
command -v wrk >/dev/null || { echo "bench/http_live.sh: needs wrk" >&2; exit 1; }
. "$ROOT/bench/http_lib.sh"
trap 'kill ${SERVER:-} 2>/dev/null; rm -rf "$W"' EXIT
start_pinned_server "$W"

metric() { curl -s "$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }

# fetch_loop URL: fetch URL's allocs profile back to back, in the
# background, each status and time into $W/lat; the loop's pid in FETCHER.
fetch_loop() {
	(while :; do
		curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$1/debug/pprof/allocs" >>"$W/lat" || true
	done) &
	FETCHER=$!
}

# run SAMPLE FETCH: one attach; prints the table's row.
run() {
	local sample=$1 fetch=$2 args=() pid url fetcher=
	[ "$sample" = all ] && args=(--sample all)
	"$ALYS" "${args[@]}" --pid $SERVER --http 0 2>"$W/err" &
	pid=$!
	until grep -q 'tracing pid' "$W/err" 2>/dev/null; do sleep 0.05; done
	url=$(sed -n 's|^alys-bpf: serving the live profile at \(http://[0-9.:]*\)/.*|\1|p' "$W/err")
	: >"$W/lat"
	if [ "$fetch" = loop ]; then fetch_loop "$url"; fetcher=$FETCHER; fi
	taskset -c 0 wrk -t1 -c4 -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$W/wrk"
	if [ -n "$fetcher" ]; then
		kill $fetcher
		wait $fetcher 2>/dev/null || true
	fi
	local events lost
	events=$(metric "$url" alys_events_total)
	lost=$(metric "$url" alys_lost_events_total)
	kill -INT $pid
	wait $pid || true
	awk '$1 == 200 { print $2 }' "$W/lat" | sort -n | awk -v s="$sample" -v f="$fetch" -v e="$events" -v l="$lost" \
		-v r="$(sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' "$W/wrk")" '
		{ v[NR] = $1 }
		END {
			if (NR) printf "%-8s %-6s %10.0f %10d %6d %8d %9.3f %9.3f %9.3f\n", s, f, r, e, l, NR,
				v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR]
			else printf "%-8s %-6s %10.0f %10d %6d %8d %9s %9s %9s\n", s, f, r, e, l, 0, "-", "-", "-"
		}'
}

echo "# bench/http_live.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, wrk -t1 -c4 ${SECS}s"
printf '%-8s %-6s %10s %10s %6s %8s %9s %9s %9s\n' sample client requests/s events lost fetches \
	median_s p95_s max_s
for sample in default all; do
	for fetch in none loop; do
		run $sample $fetch
	done
done

crystal build --release --no-color -o "$W/deep" "$ROOT/tests/programs/deep_stacks.cr"
# deep FETCH: one launched full trace; prints the table's row.
deep() {
	local fetch=$1 pid url fetcher= ms
	"$ALYS" --http 0 -- "$W/deep" "$PATHS" 100 2 >"$W/deep.out" 2>"$W/err" &
	pid=$!
	until grep -q 'serving the live profile' "$W/err" 2>/dev/null; do sleep 0.05; done
	url=$(sed -n 's|^alys-bpf: serving the live profile at \(http://[0-9.:]*\)/.*|\1|p' "$W/err")
	: >"$W/lat"
	if [ "$fetch" = loop ]; then fetch_loop "$url"; fetcher=$FETCHER; fi
	wait $pid || true
	[ -n "$fetcher" ] && { kill $fetcher 2>/dev/null; wait $fetcher 2>/dev/null || true; }
	ms=$(sed -n 's/.*elapsed_ms=\([0-9]*\).*/\1/p' "$W/deep.out")
	awk '$1 == 200 { print $2 }' "$W/lat" | sort -n | awk -v f="$fetch" -v ms="$ms" \
		-v ev="$(sed -n 's/.*detached: \([0-9]*\) events.*\|.*exited: \([0-9]*\) events.*/\1\2/p' "$W/err")" \
		-v lost="$(grep -c 'ring buffer overflowed' "$W/err")" '
		{ v[NR] = $1 }
		END {
			printf "%-6s %8d %10s %9s %8d %9s %9s %9s\n", f, ms, ev, (lost ? "yes" : "0"), NR,
				NR ? sprintf("%.3f", v[int((NR + 1) / 2)]) : "-",
				NR ? sprintf("%.3f", v[int(NR * 0.95 + 0.999)]) : "-",
				NR ? sprintf("%.3f", v[NR]) : "-"
		}'
}
echo
echo "# deep stacks: $PATHS paths of ~100 frames, launched, full trace, --http"
printf '%-6s %8s %10s %9s %8s %9s %9s %9s\n' client run_ms events lost fetches median_s p95_s max_s
deep none
deep loop
