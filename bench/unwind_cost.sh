#!/usr/bin/env bash
# bench/unwind_cost.sh: per-event cost of stack collection, measured side by
# side in one run (issue 3). A C program built without frame pointers calls
# GC_malloc_atomic COUNT times at a stack of 10, 30 and 60 frames, under:
#   untraced
#   floor       alys-bpf --empty-probes: the same uprobes doing nothing
#   fp          alys-bpf --unwind=fp (few frames: no frame pointers)
#   dwarf       alys-bpf (default): .eh_frame unwinding in BPF
#   perf        perf record --call-graph dwarf, probe at the same offset
# and prints ns per call (median of REPS runs), the cost above the floor per
# event, and ratios. Absolute times drift on shared machines; ratios hold.
#   bench/unwind_cost.sh [COUNT] [REPS]      (run as root after make)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COUNT=${1:-100000}
REPS=${2:-3}
PERF_COUNT=$((COUNT / 10))
ALYS=$ROOT/bin/alys-bpf
W=$(mktemp -d /tmp/alys-bench.XXXXXX)
. "$ROOT/bench/perf_probes.sh"
trap 'rm -rf "$W"; perf_probes_del' EXIT

gcc -O2 -fomit-frame-pointer -o "$W/alloc_depth" "$ROOT/bench/alloc_depth.c" -lgc
# perf's probes on the instructions alys-bpf probes (the entry ones are
# single-stepped).
perf_probes_add "$ALYS" "$W/alloc_depth" 1 1

ns() { sed -n 's/^ns_per_call=//p'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

run() { # MODE DEPTH N -> ns per call
	local mode=$1 depth=$2 n=$3
	case $mode in
	untraced) "$W/alloc_depth" "$depth" "$n" | ns ;;
	floor) "$ALYS" -q --empty-probes -o "$W/t.alys" -- "$W/alloc_depth" "$depth" "$n" | ns ;;
	fp) "$ALYS" -q --unwind fp -o "$W/t.alys" -- "$W/alloc_depth" "$depth" "$n" | ns ;;
	dwarf) "$ALYS" -q -o "$W/t.alys" -- "$W/alloc_depth" "$depth" "$n" | ns ;;
	perf) perf record -q -o "$W/perf.data" -e "$PERF_EVENTS" \
		--call-graph dwarf -- "$W/alloc_depth" "$depth" "$n" 2>/dev/null | ns ;;
	esac
}

echo "# alys-bpf unwinding cost, $(date -u +%F), $(uname -r), $(nproc) CPUs"
echo "# COUNT=$COUNT calls per run (perf: $PERF_COUNT), median of $REPS runs, ns per call"
printf '%-7s %9s %9s %9s %9s %9s | %12s %12s %12s %10s\n' frames untraced floor fp dwarf perf \
	"dwarf-floor" "dwarf/floor" "perf/dwarf" "B/event"
for frames in 10 30 60; do
	depth=$((frames - 6))	# + allocate, GC_malloc_atomic, main, 2 libc, _start
	declare -A r=()
	for mode in untraced floor fp dwarf perf; do
		n=$COUNT
		[ $mode = perf ] && n=$PERF_COUNT
		r[$mode]=$(for i in $(seq "$REPS"); do run $mode $depth $n; done | median)
	done
	# Check the stacks really have that many frames, and the trace size.
	"$ALYS" -q -o "$W/d.alys" -- "$W/alloc_depth" "$depth" "$COUNT" >/dev/null
	got=$("$ROOT/bin/alys_converter" -f folded-stacks --keep-allocator-frames --value objects -o - "$W/d.alys" |
		sort -t' ' -k2 -n | tail -n 1 | awk '{ print split($1, a, ";") }')
	bytes=$(stat -c %s "$W/d.alys")
	awk -v f="$frames" -v got="$got" -v u="${r[untraced]}" -v fl="${r[floor]}" -v fp="${r[fp]}" \
		-v dw="${r[dwarf]}" -v pf="${r[perf]}" -v b="$bytes" -v n="$COUNT" 'BEGIN {
		printf "%-7s %9.0f %9.0f %9.0f %9.0f %9.0f | %12.0f %12.2f %12.1f %10.1f\n",
			f "/" got, u, fl, fp, dw, pf, dw - fl, (dw - u) / (fl - u), (pf - u) / (dw - u), b / n }'
done
du -b "$W/perf.data" | awk -v n="$PERF_COUNT" '{ printf "# perf.data: %.0f bytes per event\n", $1 / n }'
