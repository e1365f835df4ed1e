#!/usr/bin/env bash
# End-to-end: a server allocating on four threads (issue 35). The HTTP
# benchmark server built with -Dpreview_mt by Debian 12's Crystal 1.6
# (http_json-mt) and by Debian 13's 1.14 (http_json-d13mt), run with
# CRYSTAL_WORKERS=4 under wrk, is attached with --pid -o 20 times in a row
# (5 for 1.14) (refill sampling, liveness from the marks):
#   - every trace converts in every format that reads allocations
#   - no liveness fallback, no notice, in any of the 20
#   - the requests really ran on 4 threads: 4 tids allocate in the traces
#   - each event's collection number fits the pauses around it
#     (gc_no_order.py), here and in the full trace below: the value read
#     once a collection (bpf/live.h, gc_no_at) on four allocating threads
# and once more over 10 s beside a full trace (--sample all) of the same
# requests: the refill estimate of bytes per request within 10% of it.
# run-all-builds: bin
# run-all-early: the longest with test_under_load (~5 min)
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T
cpu_load
for tool in wrk curl; do
	command -v $tool >/dev/null || fail "$tool installed" "run scripts/setup-debian.sh"
done
# order FILE.json: each event's collection number against the pauses around
# it (gc_no_order.py), added to judged and misdated
order() {
	local k val events=0 pauses=0 early=1 late=1
	while IFS== read -r k val; do
		printf -v "$k" '%s' "$val"
	done < <("$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/gc_no_order.py" "$1")
	judged=$((judged + events))
	misdated=$((misdated + early + late))
}

# server VARIANT RUNS: the checks above on ALYS_PROGS/VARIANT
server() {
	local v=$1 RUNS=$2 SRV=$ALYS_PROGS/$1 SERVER WRK PORT i tp ep fp from to start full_b est_b
	[ -x "$SRV" ] || { fail "$v built" "no $SRV (tests/build-programs.sh)"; return; }
	PORT=$((20000 + RANDOM % 20000))
	CRYSTAL_WORKERS=4 "$SRV" $PORT >"$T/$v-server.out" 2>&1 &
	SERVER=$!
	on_exit "kill $SERVER 2>/dev/null"
	wait_for_line "$T/$v-server.out" '^listening' 30 || fail "$v: server started" "$(cat "$T/$v-server.out")"
	# load for the whole test, many connections so that every worker serves
	wrk -t2 -c16 -d600s "http://127.0.0.1:$PORT/" >"$T/$v-wrk" 2>&1 &
	WRK=$!
	on_exit "kill $WRK 2>/dev/null"
	sleep 1

	formats="json pprof folded-stacks flamegraph report leaks timeline"
	converted=0 notices=0 fallbacks=0 tids_max=0 judged=0 misdated=0
	for i in $(seq "$RUNS"); do
		"$BIN/alys-bpf" --pid $SERVER -o "$T/$v-r$i.alys" 2>"$T/$v-r$i.err" &
		tp=$!
		on_exit "kill -INT $tp 2>/dev/null"
		wait_for_line "$T/$v-r$i.err" '^alys-bpf: tracing pid' 30 || fail "$v: run $i: attached" "$(cat "$T/$v-r$i.err")"
		# a second under wrk: ~10 collections, every worker allocating
		sleep 1
		kill -INT $tp
		wait $tp || fail "$v: run $i: exit 0" "$(cat "$T/$v-r$i.err")"
		notices=$((notices + $(grep -c 'notice:' "$T/$v-r$i.err")))
	done

	# --- bytes per request, against a full trace of the same requests ---------
	# A full trace (--sample all) around a refill one: the refill trace's
	# whole estimate (its duty windows scaled by the collector's count over
	# the trace: a part of it would carry the windows' random share) against
	# the full trace's bytes over the same wall-clock span. The same
	# requests: bytes per request compare as bytes.
	"$BIN/alys-bpf" --sample all --pid $SERVER -o "$T/$v-full.alys" 2>"$T/$v-full.err" &
	fp=$!
	on_exit "kill -INT $fp 2>/dev/null"
	wait_for_line "$T/$v-full.err" '^alys-bpf: tracing pid' 30 || fail "$v: full trace: attached" "$(cat "$T/$v-full.err")"
	sleep 0.5
	"$BIN/alys-bpf" --pid $SERVER -o "$T/$v-est.alys" 2>"$T/$v-est.err" &
	ep=$!
	on_exit "kill -INT $ep 2>/dev/null"
	wait_for_line "$T/$v-est.err" '^alys-bpf: tracing pid' 30 || fail "$v: estimate: attached" "$(cat "$T/$v-est.err")"
	sleep 10
	kill -INT $ep
	wait $ep
	sleep 0.5
	kill -INT $fp
	wait $fp
	kill $WRK 2>/dev/null
	kill $SERVER 2>/dev/null
	# The attaches' traces, converted now that the load is over: the
	# same checks, on CPUs no longer shared with wrk and the server
	for i in $(seq "$RUNS"); do
		ok_all=1
		for fmt in $formats; do
			if ! "$BIN/alys_converter" -q -f $fmt -o "$T/$v-r$i.$fmt" "$T/$v-r$i.alys" 2>"$T/$v-r$i-$fmt.err"; then
				ok_all=0
				echo "note: $v: run $i: -f $fmt: $(head -c 300 "$T/$v-r$i-$fmt.err")"
			fi
		done
		converted=$((converted + ok_all))
		live=$(json_query "$T/$v-r$i.json" "header['liveness']")
		[ "$live" = marks ] || fallbacks=$((fallbacks + 1))
		held=$(json_query "$T/$v-r$i.json" "d['end'].get('liveness')")
		[ "$held" = marks ] || fallbacks=$((fallbacks + 1))
		tids=$(json_query "$T/$v-r$i.json" "len({e['tid'] for e in d['events'] if e['kind'] != 'free'})")
		[ "$tids" -gt "$tids_max" ] && tids_max=$tids
		order "$T/$v-r$i.json"
		rm -f "$T/$v-r$i".{json,flamegraph,timeline,folded-stacks}
	done
	check_eq "$v: $RUNS attaches: every trace converts in every format ($formats)" "$converted" "$RUNS"
	check_eq "$v: $RUNS attaches: liveness from the marks from start to end in every trace" "$fallbacks" 0
	check_eq "$v: $RUNS attaches: no notice (no fallback of any kind)" "$notices" 0
	check_ge "$v: the requests allocate on 4 threads (tids seen in one trace: $tids_max)" "$tids_max" 4
	check_ge "$v: $RUNS attaches: events judged against the pauses around them ($judged)" "$judged" 1000
	check_eq "$v: $RUNS attaches: no event counts a collection that came after it, none misses one before it" \
		"$misdated" 0

	"$BIN/alys_converter" -q -f json --time 0s..1ns -o "$T/$v-est-head.json" "$T/$v-est.alys"
	from=$(json_query "$T/$v-est-head.json" "header['start_unix_ns']")
	to=$(json_query "$T/$v-est-head.json" "header['start_unix_ns'] + d['end']['stop_ns'] - header['start_ns']")
	"$BIN/alys_converter" -q -f pprof -o "$T/$v-est.pb.gz" "$T/$v-est.alys"
	est_b=$(pprof_query "$T/$v-est.pb.gz" 'total("alloc_space")')
	"$BIN/alys_converter" -q -f json --time 0s..1ns -o "$T/$v-full-head.json" "$T/$v-full.alys"
	start=$(json_query "$T/$v-full-head.json" "header['start_unix_ns']")
	"$BIN/alys_converter" -q -f pprof --time "$((from - start))ns..$((to - start))ns" \
		-o "$T/$v-full-win.pb.gz" "$T/$v-full.alys"
	full_b=$(pprof_query "$T/$v-full-win.pb.gz" 'total("alloc_space")')
	judged=0 misdated=0
	"$BIN/alys_converter" -q -f json --time 2s..4s -o "$T/$v-full-win.json" "$T/$v-full.alys"
	order "$T/$v-full-win.json"
	rm -f "$T/$v-full-win.json"
	check_ge "$v: full trace, 2 s of it: events judged against the pauses around them ($judged)" "$judged" 10000
	check_eq "$v: full trace, 2 s of it: no event counts a collection that came after it, none misses one before it" \
		"$misdated" 0
	echo "note: $v: 10 s on 4 threads: full trace $full_b bytes, refill estimate $est_b bytes"
	check_ge "$v: full trace: bytes in the window" "$full_b" 1000000
	check_le "$v: refill estimate of bytes per request within 10% of the full trace's" \
		"$(off_pct "$est_b" "$full_b")" 1000
	check_eq "$v: estimate beside a full trace: no notice" "$(grep -c 'notice:' "$T/$v-est.err")" 0
}

# ALYS_THREAD_VARIANTS="NAME:RUNS ...": other builds (Crystal 1.21's, by
# hand: docs/DESIGN.md)
for vr in ${ALYS_THREAD_VARIANTS:-http_json-mt:20 http_json-d13mt:5}; do
	server "${vr%:*}" "${ALYS_THREAD_RUNS:-${vr#*:}}"
done

check_all_pprof_valid "$T"
summary
