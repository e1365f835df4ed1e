#!/usr/bin/env bash
# bench/stack_dedup.sh: stack deduplication, the design before issue 11 (a
# kernel hash map of 65,536 id -> frames entries) against the current one
# (an LRU cache of sent keys in the kernel, the id table in the daemon),
# side by side in one run, modes interleaved, best of REPS:
#   depth10/30/60   bench/alloc_depth.c: COUNT calls of GC_malloc_atomic at
#                   one stack of 10, 30, 60 frames (ns per call)
#   alloc_heavy     bench/workloads (as bench/overhead; ms of work)
#   json_parse
#   many_stacks     tests/programs/many_stacks.cr paths PATHS: PATHS distinct
#                   stacks, each visited twice (wall ms of the whole run)
# For each: untraced, the empty-probe floor (current build), old, new; the
# cost above the floor per event of old and new; events without a stack.
#   bench/stack_dedup.sh [REPS] [OLD_REV]   (as root, after make)
# OLD_REV (default: the last commit whose BPF program still had the fixed
# stack map) is built in a temporary git worktree.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${1:-3}
OLD_REV=${2:-$(git -C "$ROOT" log -n 1 --format=%H -S'ALYS_CNT_STACK_COLLISION_UNRESOLVED' -- bpf/alys.bpf.c)^}
COUNT=50000
PATHS=200000
NEW=$ROOT/bin/alys-bpf
W=$(mktemp -d /tmp/alys-dedup.XXXXXX)
cleanup() {
	git -C "$ROOT" worktree remove --force "$W/old" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

echo "# building the old design ($(git -C "$ROOT" rev-parse --short "$OLD_REV")) in $W/old" >&2
git -C "$ROOT" worktree add --detach "$W/old" "$OLD_REV" >/dev/null 2>&1
make -C "$W/old" -s -j2 bin/alys-bpf bin/alys_converter >&2
OLD=$W/old/bin/alys-bpf
CONV=$ROOT/bin/alys_converter
grep -q ALYS_CNT_STACK_COLLISION_UNRESOLVED "$W/old/bpf/alys.bpf.c" ||
	{ echo "OLD_REV $OLD_REV is not the fixed-map design" >&2; exit 1; }

gcc -O2 -fomit-frame-pointer -o "$W/alloc_depth" "$ROOT/bench/alloc_depth.c" -lgc
for w in alloc_heavy json_parse; do
	crystal build --release --no-color -o "$W/$w" "$ROOT/bench/workloads/$w.cr"
done
crystal build --no-color -o "$W/many_stacks" "$ROOT/tests/programs/many_stacks.cr"

# cmd WORKLOAD: the command line; metric WORKLOAD: how its time is read
cmd() {
	case $1 in
	depth*) echo "$W/alloc_depth $((${1#depth} - 6)) $COUNT" ;;	# + 6 frames around
	alloc_heavy) echo "$W/alloc_heavy 20000" ;;
	json_parse) echo "$W/json_parse 40" ;;
	many_stacks) echo "$W/many_stacks paths $PATHS $W/truth" ;;
	esac
}

# run MODE WORKLOAD: "time events stackless"; time in ns per call (depth*),
# ms of work (workloads) or wall ms (many_stacks).
run() {
	local mode=$1 w=$2 out t0 t1 tracer=()
	case $mode in
	floor) tracer=("$NEW" -q --empty-probes -o "$W/t.alys" --) ;;
	old) tracer=("$OLD" -q -o "$W/t.alys" --) ;;
	new) tracer=("$NEW" -q -o "$W/t.alys" --) ;;
	esac
	rm -f "$W/t.alys"
	t0=$(date +%s%N)
	# shellcheck disable=SC2046
	out=$("${tracer[@]}" $(cmd "$w"))
	t1=$(date +%s%N)
	local time
	case $w in
	depth*) time=$(sed -n 's/^ns_per_call=//p' <<<"$out") ;;
	many_stacks) time=$(((t1 - t0) / 1000000)) ;;
	*) time=$(sed -n 's/^elapsed_ms=//p' <<<"$out") ;;
	esac
	if [ "$mode" = old ] || [ "$mode" = new ]; then
		# allocation events, and those under [stack lost]
		"$CONV" -q -f folded-stacks --value objects -o "$W/t.folded" "$W/t.alys"
		awk -v t="$time" '{ n += $NF } /\[stack lost\]/ { l += $NF }
			END { printf "%s %d %d\n", t, n, l }' "$W/t.folded"
	else
		echo "$time 0 0"
	fi
}

WORKLOADS="depth10 depth30 depth60 alloc_heavy json_parse many_stacks"
MODES="untraced floor old new"
echo "# bench/stack_dedup.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, best of $REPS," \
	"old = $(git -C "$ROOT" rev-parse --short "$OLD_REV")"
printf '%-12s %-6s %10s %10s %10s %10s | %11s %11s %9s | %12s %12s\n' workload unit untraced \
	floor old new "old-floor" "new-floor" "new/old" "old stackless" "new stackless"
for w in $WORKLOADS; do
	for i in $(seq "$REPS"); do
		for mode in $MODES; do
			run "$mode" "$w" >>"$W/runs.$w.$mode"
		done
	done
	best() { sort -n "$W/runs.$w.$1" | head -n 1; }
	unit=ms
	case $w in depth*) unit=ns/call ;; many_stacks) unit=wall_ms ;; esac
	paste -d' ' <(best untraced) <(best floor) <(best old) <(best new) |
	awk -v w="$w" -v unit="$unit" -v count=$COUNT '{
		u = $1; f = $4; o = $7; n = $10; ev = $11
		# per event: ns per call already; else ms over the events
		per = (unit == "ns/call") ? 1 : 1e6 / (ev ? ev : 1)
		printf "%-12s %-6s %10.1f %10.1f %10.1f %10.1f | %9.0fns %9.0fns %9.2f | %5.1f%% of %-7d %5.1f%% of %-7d\n",
			w, unit, u, f, o, n, (o - f) * per, (n - f) * per, (n - u) / (o - u),
			100 * $9 / ($8 ? $8 : 1), $8, 100 * $12 / ($11 ? $11 : 1), $11 }'
done
echo "# old-floor, new-floor: cost above the empty probes per allocation event;"
echo "# new/old: traced time above untraced, new over old; stackless: events under [stack lost]"
