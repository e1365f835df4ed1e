#!/usr/bin/env bash
# bench/http_server.sh: what attaching alys-bpf costs a busy Crystal HTTP
# server (issue 12). bench/workloads/http_json.cr answers JSON on loopback;
# wrk (Debian's) loads it with 1 thread and 4 connections for SECS seconds
# per run, each pinned to its own CPU. Each mode attaches to the running
# server with --pid before the load and detaches after it:
#   untraced        nothing attached
#   default         alys-bpf --pid (refill sampling, probes attached 20% of
#                   the time: --duty 20)
#   default-nopauses  the same without the GC pause and heap growth probes
#                   (ALYS_BPF_NO_PAUSES=1): what they cost (issue 40)
#   default-nomemory  the same without the memory samples (--memory-every
#                   0): what reading where RSS goes costs (issue 40)
#   floor-default   the same probes doing nothing (--empty-probes)
#   refill-100      --sample refill --duty 100 (probes attached all along)
#   bytes:512K      --sample bytes:512K (a probe on every allocation)
#   all             --sample all
#   http-fetch5     the default with --http (no trace file) and a client
#                   fetching /debug/pprof/allocs every 5 s (issue 21);
#                   bytes/request from its /metrics
#   agent           alys-bpf --all (issue 22): the same sampling, found as
#                   a Crystal process, pushing 5-s windows to
#                   tests/e2e/push_receiver.py (answering 200 at once);
#                   bytes/request from /metrics, for its pid
# Prints, per mode, the median over REPS rounds of its requests/s divided by
# those of an untraced run just before it, and the bytes per request the
# trace estimates (its allocated bytes over the requests served while
# attached), against the full trace's (the same round's); and, beside wrk's
# p99 latency, the p99 and longest GC pause the trace recorded.
#   bench/http_server.sh [REPS [SECS]]   (as root, after make; 3 and 8)
# MODES="default ..." picks modes; LIBGC_DIR=DIR links the server with
# DIR/libgc.a (bench/http_lib.sh), e.g. the clang large-config build of the
# toolchain matrix; the first line then names it, and a mode that should
# sample at the refills but fell back says so and fails.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${1:-3}
SECS=${2:-8}
ALYS=$ROOT/bin/alys-bpf
CONV=$ROOT/bin/alys_converter
W=$(mktemp -d /tmp/alys-http.XXXXXX)
command -v wrk >/dev/null || { echo "bench/http_server.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }
. "$ROOT/bench/http_lib.sh"
trap 'kill ${SERVER:-} ${RX:-} 2>/dev/null; [ -n "${KEEP_W:-}" ] || rm -rf "$W"' EXIT
start_pinned_server "$W"
# --all pushes here: a receiver that answers at once (no checks).
mkdir -p "$W/rx"
python3 "$ROOT/tests/e2e/push_receiver.py" --out "$W/rx" --port-file "$W/rx/port" \
	--mode status:200 2>/dev/null &
RX=$!
for _ in $(seq 100); do [ -s "$W/rx/port" ] && break; sleep 0.1; done
RX_PORT=$(cat "$W/rx/port")

# run MODE: prints "requests_per_s requests bytes".
run() {
	local mode=$1 args=() envs=() pid rps req bytes=0 p99=- gcp99=- gcmax=-
	case $mode in
	untraced) ;;
	default) args=() ;;
	default-nopauses) envs=(ALYS_BPF_NO_PAUSES=1) ;;
	default-nomemory) args=(--memory-every 0) ;;
	floor-default) args=(--empty-probes) ;;
	refill-100) args=(--sample refill --duty 100) ;;
	bytes:512K) args=(--sample bytes:512K) ;;
	all) args=(--sample all) ;;
	http-fetch5) args=(--http 0) ;;
	agent) args=(--all --only-comm http_json --http 0 --push "http://127.0.0.1:$RX_PORT"
		     --push-every 5) ;;
	esac
	rm -f "$W/t.alys" "$W/err"
	if [ "$mode" = http-fetch5 ]; then
		"$ALYS" "${args[@]}" --pid $SERVER 2>"$W/err" &
		pid=$!
		until grep -q 'tracing pid' "$W/err" 2>/dev/null; do sleep 0.05; done
		url=$(sed -n 's|^alys-bpf: serving the live profile at \(http://[0-9.:]*\)/.*|\1|p' "$W/err")
		(while :; do curl -s -o /dev/null "$url/debug/pprof/allocs"; sleep 5; done) &
		fetcher=$!
	elif [ "$mode" = agent ]; then
		"$ALYS" "${args[@]}" 2>"$W/err" &
		pid=$!
		until grep -q "tracing pid $SERVER " "$W/err" 2>/dev/null; do sleep 0.05; done
		url=$(sed -n 's|^alys-bpf: serving the agent.s metrics at \(http://[0-9.:]*\)/.*|\1|p' "$W/err")
	elif [ "$mode" != untraced ]; then
		env "${envs[@]}" "$ALYS" "${args[@]}" --pid $SERVER -o "$W/t.alys" 2>"$W/err" &
		pid=$!
		until grep -q 'tracing pid' "$W/err" 2>/dev/null; do sleep 0.05; done
	fi
	taskset -c 0 wrk --latency -t1 -c4 -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$W/wrk"
	if [ "$mode" = http-fetch5 ]; then
		kill $fetcher
		wait $fetcher 2>/dev/null || true
		bytes=$(curl -s "$url/metrics" | awk '$1 == "alys_allocated_bytes_total" { print $2 }')
	fi
	if [ "$mode" = agent ]; then
		bytes=$(curl -s "$url/metrics" | awk -v p="alys_allocated_bytes_total{pid=\"$SERVER\"," \
			'index($1, p) == 1 { print $2 }')
	fi
	if [ "$mode" != untraced ]; then
		kill -INT $pid
		wait $pid || true
		if grep -q 'probe on every allocation' "$W/err" && [[ $mode != bytes* && $mode != all ]]; then
			echo "bench/http_server.sh: $mode fell back from refill sampling:" >&2
			cat "$W/err" >&2
			exit 1
		fi
	fi
	rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' "$W/wrk")
	# wrk's p99 in ms (it prints us, ms or s)
	p99=$(awk '$1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
		print (u == "us" ? v / 1000 : u == "s" ? v * 1000 : v) }' "$W/wrk")
	if [ -s "$W/t.alys" ]; then
		read -r gcp99 gcmax < <("$CONV" -q -f report -o - "$W/t.alys" 2>/dev/null |
			sed -n 's/^ *p50 .* p99 \([0-9.]*\) ms, max \([0-9.]*\) ms$/\1 \2/p') || true
	fi
	# the default's last round: its pauses and wrk's distribution, printed
	# side by side at the end
	if [ "$mode" = default ] && [ -s "$W/t.alys" ]; then
		cp "$W/wrk" "$W/wrk.default"
		"$CONV" -q -f json -o - "$W/t.alys" 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin)["pauses"]:
    print(p["duration_ns"])' >"$W/pauses.default" || true
	fi
	req=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$W/wrk")
	case $mode in
	untraced | floor-default | http-fetch5 | agent) ;;
	*) bytes=$("$CONV" -f report -o - "$W/t.alys" 2>/dev/null |
		sed -n 's/^ *Allocated: [0-9]* objects, \([0-9]*\) bytes.*/\1/p') ;;
	esac
	echo "$rps $req ${bytes:-0} ${p99:--} ${gcp99:--} ${gcmax:--}"
}

# Machine speed drifts by 30% and more from minute to minute here: each
# traced run is paired with an untraced run just before it, and the ratio
# reported is the median of the pairs' ratios.
MODES=${MODES:-"default floor-default refill-100 bytes:512K all http-fetch5 agent"}
gc_used="Debian's libgc.so.1"
[ -z "${LIBGC_DIR:-}" ] || gc_used="$LIBGC_DIR/libgc.a (static)"
echo "# bench/http_server.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs," \
	"wrk -t1 -c4 ${SECS}s, median of $REPS paired rounds, libgc: $gc_used"
for i in $(seq "$REPS"); do
	for mode in $MODES; do
		read -r u _ _ < <(run untraced)
		read -r r req bytes p99 gcp99 gcmax < <(run "$mode")
		echo "$(awk -v r="$r" -v u="$u" 'BEGIN { printf "%.4f", r / u }') $r $u $req $bytes" \
			"$p99 $gcp99 $gcmax" >>"$W/runs.${mode//[:]/_}"
	done
done
printf '%-16s %12s %12s %11s %14s %12s %9s %11s %10s\n' mode requests/s untraced x_untraced \
	bytes/request x_full_trace p99_ms gc_p99_ms gc_max_ms
declare -A line=() bpr=()
for mode in $MODES; do
	line[$mode]=$(sort -n "$W/runs.${mode//[:]/_}" | sed -n "$(((REPS + 1) / 2))p")
	read -r _ _ _ req bytes <<<"${line[$mode]}"
	bpr[$mode]=$(awk -v b="$bytes" -v r="$req" 'BEGIN { printf "%.0f", (b > 0 ? b / r : 0) }')
done
for mode in $MODES; do
	read -r ratio r u _ _ p99 gcp99 gcmax <<<"${line[$mode]}"
	awk -v m=$mode -v x="$ratio" -v r="$r" -v u="$u" -v b="${bpr[$mode]}" \
		-v f="${bpr[all]:-0}" -v p="$p99" -v g="$gcp99" -v gm="$gcmax" 'BEGIN {
		printf "%-16s %12.0f %12.0f %11.2f %14s %12s %9s %11s %10s\n", m, r, u, x,
			(b > 0 ? b : "-"), (b > 0 && f > 0 ? sprintf("%.3f", b / f) : "-"), p, g, gm }'
done

# The collector's pauses beside what the clients waited (the default mode's
# last round): wrk's latency percentiles and the pauses' own, in ms, then
# the pauses' histogram (/metrics' buckets).
if [ -s "${W}/pauses.default" ]; then
	echo
	echo "# default mode, last round: wrk's latency and the GC pauses, ms"
	wrk_ms() {
		awk -v q="$1" '$1 == q { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
			printf "%.3f", (u == "us" ? v / 1000 : u == "s" ? v * 1000 : v) }' "$W/wrk.default"
	}
	printf '%-10s %8s %8s %8s %8s %8s %8s\n' "" p50 p75 p90 p99 max count
	printf '%-10s %8s %8s %8s %8s %8s %8s\n' wrk "$(wrk_ms 50%)" "$(wrk_ms 75%)" "$(wrk_ms 90%)" \
		"$(wrk_ms 99%)" - "$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$W/wrk.default")"
	sort -n "$W/pauses.default" | awk '{ v[NR] = $1 / 1e6 } END {
		q[1] = 0.5; q[2] = 0.75; q[3] = 0.9; q[4] = 0.99
		printf "%-10s", "gc pauses"
		for (i = 1; i <= 4; i++) { k = int(q[i] * NR + 0.999999); if (k < 1) k = 1; printf " %8.3f", v[k] }
		printf " %8.3f %8d\n", v[NR], NR }'
	awk 'BEGIN { n = split("0.1 0.25 0.5 1 2.5 5 10 25 50 100 1000", le, " ") }
		{ ms = $1 / 1e6; for (i = 1; i <= n && ms > le[i]; i++); c[i]++ }
		END { printf "pauses by ms:"; for (i = 1; i <= n; i++) if (c[i]) printf " <=%s: %d", le[i], c[i]
			if (c[n + 1]) printf " >%s: %d", le[n], c[n + 1]; printf "\n" }' "$W/pauses.default"
fi
