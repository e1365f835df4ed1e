#!/usr/bin/env bash
# bench/gc_pauses.sh: what following blocks to their death costs a program's
# own collections (issue 38), side by side in one run. bench/workloads/
# live_heap.cr (--release) keeps OBJECTS small objects alive (~60 MB with
# 300000) and times COLLECTS GC.collect calls itself. Modes, interleaved
# round-robin:
#   untraced
#   no-liveness   alys-bpf --no-liveness (every call traced, no following)
#   full          alys-bpf defaults: every block followed, each explicit
#                 collection's marks read
#   bytes:512K    --sample bytes:512K: the sampled blocks followed
#   refill        --sample refill: the slow paths' blocks followed
# and with ALYS_OLD_BIN=DIR, old-full run with DIR/alys-bpf.
# Prints the median over REPS rounds of the pauses' total and the longest
# (the program's own measure), and their ratio to no-liveness's.
#   bench/gc_pauses.sh [OBJECTS] [COLLECTS] [REPS]   (root, after make)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OBJECTS=${1:-300000} COLLECTS=${2:-20} REPS=${3:-3}
ALYS=$ROOT/bin/alys-bpf
W=$(mktemp -d /tmp/alys-pauses.XXXXXX)
trap 'rm -rf "$W"' EXIT
crystal build --release --no-color -o "$W/live_heap" "$ROOT/bench/workloads/live_heap.cr"
CMD=("$W/live_heap" "$OBJECTS" "$COLLECTS")

run() {
	local mode=$1 bin=$ALYS opt=()
	case $mode in
	untraced) "${CMD[@]}" >"$W/out" ;;
	*)
		case $mode in
		no-liveness) opt=(--no-liveness) ;;
		bytes:512K) opt=(--sample bytes:512K) ;;
		refill) opt=(--sample refill) ;;
		esac
		[[ $mode == old-* ]] && bin=$ALYS_OLD_BIN/alys-bpf
		"$bin" -q "${opt[@]}" -o "$W/t.alys" -- "${CMD[@]}" >"$W/out" ;;
	esac
	sed -n 's/.*total_ms=\([0-9.]*\) longest_ms=\([0-9.]*\).*/\1 \2/p' "$W/out"
}

MODES="untraced no-liveness full bytes:512K refill"
[ -n "${ALYS_OLD_BIN:-}" ] && MODES="$MODES old-full"
echo "# bench/gc_pauses.sh $OBJECTS $COLLECTS, $(date -u +%F), $(uname -r), $(nproc) CPUs, median of $REPS rounds"
for i in $(seq "$REPS"); do
	for mode in $MODES; do
		run "$mode" >>"$W/runs.$mode"
	done
done
median() { sort -n "$W/runs.$1" | sed -n "$(((REPS + 1) / 2))p"; }
read -r base base_long < <(median no-liveness)
printf '%-14s %10s %10s %12s %12s\n' mode total_ms longest_ms x_no_liveness x_longest
for mode in $MODES; do
	read -r total longest < <(median "$mode")
	printf '%-14s %10s %10s %12.2f %12.2f\n' "$mode" "$total" "$longest" \
		"$(echo "$total / $base" | bc -l)" "$(echo "$longest / $base_long" | bc -l)"
done
