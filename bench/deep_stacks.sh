#!/usr/bin/env bash
# bench/deep_stacks.sh: where a full trace's time goes on compiler-sized
# stacks (issue 19), side by side in one run. tests/programs/deep_stacks.cr
# (--release): PATHS paths of a recursion DEPTH levels deep whose shape
# follows the data, two allocation sites each (2 * PATHS distinct stacks of
# ~DEPTH + 8 frames), visited VISITS times. Modes, interleaved round-robin:
#   untraced
#   floor         alys-bpf --empty-probes: the same uprobes doing nothing
#   full          alys-bpf defaults (DWARF stacks, liveness)
#   no-liveness   --no-liveness: what following blocks to their death costs
#   16-frames     --no-liveness --max-frames 16: what deep walks cost
# Prints the best work time of REPS rounds (timed by the program itself,
# start-up excluded), x_floor, trace bytes per event, and for full and
# no-liveness the BPF programs' own run time per call (kernel.bpf_stats_enabled,
# read by bpftool in one more run of each traced mode, not in the timed
# ones; a uprobe session program's
# time a run, at entries and the returns not skipped, under bpf_entry_ns)
# and the stack nodes written.
# ALYS_OLD_BIN=DIR adds the modes run with DIR/alys-bpf (e.g. a build of an
# earlier commit) as old-full and old-no-liveness. DEEP_SHAPE=compiler
# gives the stacks the compiler's frame sizes and locality (deep_stacks.cr).
#   bench/deep_stacks.sh [PATHS] [DEPTH] [VISITS] [REPS]   (root, after make)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PATHS=${1:-262144} DEPTH=${2:-100} VISITS=${3:-2} REPS=${4:-3}
ALYS=$ROOT/bin/alys-bpf CONV=$ROOT/bin/alys_converter
W=$(mktemp -d /tmp/alys-deep.XXXXXX)
trap 'sysctl -qw kernel.bpf_stats_enabled=0; rm -rf "$W"' EXIT
crystal build --release --no-color -o "$W/deep" "$ROOT/tests/programs/deep_stacks.cr"
CMD=("$W/deep" "$PATHS" "$DEPTH" "$VISITS")

# counter TRACE NAME
counter() {
	"$CONV" -q -f json --time 0s..1ns -o "$W/c.json" "$1" &&
		python3 -c "import json,sys; print(json.load(open('$W/c.json'))['counters'].get('$2', 0))"
}

# bpf_stats PID OUT: the last bpftool reading of the programs while PID runs
bpf_stats() {
	while kill -0 "$1" 2>/dev/null; do
		[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = 1 ] &&
			bpftool prog show -j >"$W/p.json.tmp" 2>/dev/null &&
			grep -q 'gc_alloc_\(return\|session\)' "$W/p.json.tmp" && mv "$W/p.json.tmp" "$2"
		sleep 0.3
	done
}

run() {
	local mode=$1 bin=$ALYS opt=() pid ms
	case $mode in
	untraced) "${CMD[@]}" | sed -n 's/.*elapsed_ms=\([0-9]*\).*/\1 0 0 - - -/p'; return ;;
	floor) opt=(--empty-probes) ;;
	full | old-full) ;;
	no-liveness | old-no-liveness) opt=(--no-liveness) ;;
	16-frames) opt=(--no-liveness --max-frames 16) ;;
	esac
	[[ $mode == old-* ]] && bin=$ALYS_OLD_BIN/alys-bpf
	rm -f "$W/t.alys" "$W/p.json"
	"$bin" -q "${opt[@]}" -o "$W/t.alys" -- "${CMD[@]}" >"$W/out" &
	pid=$!
	bpf_stats "$pid" "$W/p.json" &
	wait "$pid"
	wait
	ms=$(sed -n 's/.*elapsed_ms=\([0-9]*\).*/\1/p' "$W/out")
	if [ "$mode" = floor ]; then echo "$ms 0 0 - - -"; return; fi
	python3 - "$W/p.json" "$ms" "$(stat -c %s "$W/t.alys")" \
		"$(counter "$W/t.alys" stack_nodes)" <<'PY'
import json, sys
path, ms, size, nodes = sys.argv[1:]
entry = ret = calls = 0
try:
    for p in json.load(open(path)):
        if p.get('name', '').endswith('_entry') and p.get('run_cnt', 0) > calls:
            calls, entry = p['run_cnt'], p['run_time_ns'] / p['run_cnt']
        if p.get('name') == 'gc_alloc_return' and p.get('run_cnt'):
            ret = p['run_time_ns'] / p['run_cnt']
        # one uprobe session program: its
        # time a run, entries and the returns not skipped alike
        if p.get('name', '').startswith('gc_alloc_sess') and p.get('run_cnt', 0) > calls:
            calls, entry, ret = p['run_cnt'], p['run_time_ns'] / p['run_cnt'], 0
except (OSError, ValueError):
    pass
print(ms, size, calls, f'{entry:.0f}', f'{ret:.0f}', nodes)
PY
}

MODES="untraced floor full no-liveness 16-frames"
[ -n "${ALYS_OLD_BIN:-}" ] && MODES="$MODES old-full old-no-liveness"
sysctl -qw kernel.bpf_stats_enabled=0
echo "# bench/deep_stacks.sh $PATHS $DEPTH $VISITS${DEEP_SHAPE:+ (DEEP_SHAPE=$DEEP_SHAPE)}, $(date -u +%F), $(uname -r), $(nproc) CPUs, best of $REPS rounds"
for i in $(seq "$REPS"); do
	for mode in $MODES; do
		run "$mode" >>"$W/runs.$mode"
	done
done
# the programs' own time: one run of each traced mode after the timed ones,
# with the statistics on (in a timed run their clock reads would lengthen
# the floor's two program runs a call more than a traced call's one)
sysctl -qw kernel.bpf_stats_enabled=1
for mode in $MODES; do
	case $mode in untraced | floor) ;; *) run "$mode" | cut -d' ' -f3-5 >"$W/stats.$mode" ;; esac
done
sysctl -qw kernel.bpf_stats_enabled=0
floor=$(sort -n "$W/runs.floor" | head -n 1 | cut -d' ' -f1)
events=$((2 * PATHS * VISITS))
printf '%-16s %9s %8s %11s %12s %11s %11s\n' mode work_ms x_floor bytes/event bpf_entry_ns bpf_ret_ns nodes/stack
for mode in $MODES; do
	read -r ms size calls entry ret nodes < <(sort -n "$W/runs.$mode" | head -n 1)
	[ -f "$W/stats.$mode" ] && read -r calls entry ret <"$W/stats.$mode"
	awk -v m="$mode" -v ms="$ms" -v f="$floor" -v s="$size" -v e="$events" -v en="$entry" \
		-v r="$ret" -v n="$nodes" -v st=$((2 * PATHS)) 'BEGIN {
		printf "%-16s %9d %8.2f %11s %12s %11s %11s\n", m, ms, ms / f,
			(s ? sprintf("%.1f", s / e) : "-"), en, r, ((n != "-" && n > 0) ? sprintf("%.1f", n / st) : "-") }'
done
