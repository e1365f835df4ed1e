#!/usr/bin/env bash
# End-to-end: the toolchain matrix's --http and --all cells (issue 33).
# tests/build-programs.sh links sleeper with libgc 8.2.2 built from Debian's
# source the way the official Crystal tarballs build it (clang -O2,
# --enable-large-config, static: sleeper-clang) and with gcc the same way
# (sleeper-gcclarge). For each, beside Debian's libgc.a (sleeper-static):
#   --pid --http   refill sampling and mark liveness (no fallback notice),
#                  the live profile names tick_alloc, and its bytes match the
#                  program's own count over the same window within 15%
#   --all --push   the agent finds the process, traces it with the same
#                  sampling and pushes profiles that name tick_alloc
# (census, heap snapshots, liveness, refill and exact traces of the matrix
# are in test_census, test_heap, test_liveness, test_refill, test_trace.)
# The tracer's userspace code is the same whatever the libgc: plain build.
# run-all-builds: bin
# run-all-alone: the --all agent would trace the programs of a test beside it
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
require_root_bpf
make_tmpdir T
. "$HERE/agent_lib.sh"
P=$ALYS_PROGS

# own_bytes HEARTBEAT-FILE: the program's own count of tick_alloc's bytes
# in its last heartbeat line.
own_bytes() { tail -n 1 "$1" | sed -n 's/.* bytes=\([0-9]*\).*/\1/p'; }
# tick_bytes PPROF: alloc_space of the samples with tick_alloc on their stack.
tick_bytes() {
	pprof_query "$1" 'sum(s["value"][types.index("alloc_space")] for s in p.get("sample", []) if any(f[0] == "tick_alloc" for l in s["location_id"] for f, _ in locs[l]))'
}

for v in sleeper-static $(gc_matrix sleeper); do
	[ -x "$P/$v" ] || { fail "$v: built" "no $P/$v (tests/build-programs.sh)"; continue; }
	# --- --pid --http ------------------------------------------------------
	"$P/$v" 0 "$T/$v.hb" 200 >/dev/null &
	sp=$!
	on_exit "kill $sp 2>/dev/null"
	wait_for_line "$T/$v.hb" HEARTBEAT 20 || fail "$v: started" ""
	"$BIN/alys-bpf" -v --pid $sp --http 127.0.0.1:0 -o "$T/$v.alys" 2>"$T/$v.err" &
	tp=$!
	wait_for_line "$T/$v.err" 'serving the live profile at' 30 ||
		fail "$v: --http serves" "$(cat "$T/$v.err")"
	url=$(sed -n 's|^alys-bpf: serving the live profile at \(http://[0-9.:]*\)/.*|\1|p' "$T/$v.err")
	# a heartbeat boundary on each side of the window
	n0=$(wc -l <"$T/$v.hb")
	until [ "$(wc -l <"$T/$v.hb")" -gt "$n0" ]; do sleep 0.05; done
	b0=$(own_bytes "$T/$v.hb")
	curl -sf -o "$T/$v-0.pb.gz" "$url/debug/pprof/allocs"
	sleep 4
	n1=$(wc -l <"$T/$v.hb")
	until [ "$(wc -l <"$T/$v.hb")" -gt "$n1" ]; do sleep 0.05; done
	b1=$(own_bytes "$T/$v.hb")
	curl -sf -o "$T/$v-1.pb.gz" "$url/debug/pprof/allocs"
	check_eq "$v: --http: /debug/pprof/allocs answers" "$?" 0
	kill -INT $tp
	wait $tp
	check_eq "$v: --http: detached, exit 0" "$?" 0
	err=$(cat "$T/$v.err")
	check_match "$v: --http: refill probe derived" "$err" 'refill probe: GC_malloc_kind\+0x[0-9a-f]+'
	check_match "$v: --http: collector layout verified (liveness by marks)" "$err" \
		'collector layout verified on [0-9]+ allocations'
	check_eq "$v: --http: no fallback notice" "$(grep -c 'notice:' "$T/$v.err")" 0
	tick=$(( $(tick_bytes "$T/$v-1.pb.gz") - $(tick_bytes "$T/$v-0.pb.gz") ))
	own=$((b1 - b0))
	echo "note: $v: --http: tick_alloc $tick bytes in the live profile, $own by the program's count"
	check_ge "$v: --http: the live profile names tick_alloc and counts its bytes" "$tick" 1
	check_le "$v: --http: tick_alloc's bytes within 15% of the program's own count" \
		"$(off_pct "$tick" "$own")" 1500
	"$BIN/alys_converter" -f json -o "$T/$v.json" "$T/$v.alys"
	check_eq "$v: --http: the trace says refill sampling" "$(json_query "$T/$v.json" "header['sample']")" \
		"refill duty:20%"
	check_eq "$v: --http: the trace says liveness by marks" "$(json_query "$T/$v.json" "header['liveness']")" marks

	# --- --all --push ------------------------------------------------------
	start_receiver "$T/rx-$v"
	"$BIN/alys-bpf" -v --all --only-comm "$v" --push "http://127.0.0.1:$(cat "$T/rx-$v/port")/" \
		--push-every 2 --http 0 2>"$T/$v-agent.err" &
	ap=$!
	on_exit "kill -INT $ap 2>/dev/null"
	wait_for_line "$T/$v-agent.err" "^alys-bpf: tracing pid $sp " 60 ||
		fail "$v: --all: traces the process" "$(cat "$T/$v-agent.err")"
	for _ in $(seq 100); do
		[ "$(grep -c . "$T/rx-$v/index.jsonl" 2>/dev/null || echo 0)" -ge 2 ] && break
		sleep 0.1
	done
	kill -INT $ap
	wait $ap
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
	check_eq "$v: --all: no fallback notice" "$(grep -c 'notice:' "$T/$v-agent.err")" 0
	check_match "$v: --all: refill probe derived" "$(cat "$T/$v-agent.err")" \
		'refill probe: GC_malloc_kind\+0x[0-9a-f]+'
	pushed=$("$ALYS_PYTHON" - "$T/rx-$v" "$sp" "$v" <<'PY'
import json, sys
d, pid, svc = sys.argv[1], sys.argv[2], sys.argv[3]
rs = [json.loads(l) for l in open(d + "/index.jsonl")]
rs = [r for r in rs if r["labels"].get("pid") == pid and r["labels"].get("service_name") == svc]
print(len(rs), sum(r["totals"].get("alloc_space", 0) for r in rs))
PY
)
	check_ge "$v: --all: profiles pushed for the process (${pushed% *})" "${pushed% *}" 1
	check_ge "$v: --all: they count its allocations (${pushed#* } bytes)" "${pushed#* }" 1
done

check_all_pprof_valid "$T"
summary
