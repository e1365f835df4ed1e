#!/usr/bin/env bash
# bench/daemon_cost.sh: the daemon's own CPU per event and peak RSS, with
# the live profile on (--http: every record also goes to it) and a trace
# file, the current build against ALYS_OLD_BIN's (a build of an earlier
# commit), side by side in one run (issue 39: one record stream, one
# accumulator). Workloads: tests/programs/deep_stacks.cr (--release,
# 262144 paths 100 deep, 2 visits) and Debian's `crystal` compiler
# type-checking a 10-line program (as bench/compiler.sh). Modes alternate
# new, old within each round; the median of REPS rounds is printed, and the
# ratio new / old of the medians.
# The daemon's CPU is its own (utime + stime from /proc/PID/stat, read
# every 0.1 s while it runs: the last 0.1 s may be missed, alike for both),
# never the target's; its peak RSS is VmHWM.
#   ALYS_OLD_BIN=DIR bench/daemon_cost.sh [REPS]   (root, after make; default 3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${1:-3}
NEW=$ROOT/bin/alys-bpf CONV=$ROOT/bin/alys_converter
OLD=${ALYS_OLD_BIN:?set ALYS_OLD_BIN to the bin/ directory of the build to compare with}/alys-bpf
[ -x "$OLD" ] || { echo "$OLD: not built (make in that tree)" >&2; exit 1; }
command -v crystal >/dev/null || { echo "crystal: not installed (scripts/setup-debian.sh)" >&2; exit 1; }
W=$(mktemp -d /tmp/alys-daemon.XXXXXX)
trap 'rm -rf "$W"' EXIT
PORT=${ALYS_BENCH_PORT:-16391}

crystal build --release --no-color -o "$W/deep" "$ROOT/tests/programs/deep_stacks.cr"
cp "$ROOT/bench/workloads/compiler_input.cr" "$W/prog.cr"
export CRYSTAL_CACHE_DIR=$W/cache
crystal build --no-codegen --no-color "$W/prog.cr" -o "$W/prog" >/dev/null	# warm the cache

workload_cmd() {
	case $1 in
	deep) echo "$W/deep 262144 100 2" ;;
	compiler) echo "crystal build --no-codegen --no-color $W/prog.cr -o $W/prog" ;;
	esac
}

# watch PID: until it exits, its CPU ticks and VmHWM (KiB), into $W/daemon
watch() {
	local pid=$1 ticks hwm
	while kill -0 "$pid" 2>/dev/null; do
		ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || break
		hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || break
		[ -n "$hwm" ] && echo "$ticks $hwm" >"$W/daemon"
		sleep 0.1
	done
}

# run BIN WORKLOAD: "events cpu_s rss_mb"
run() {
	local bin=$1 pid cmd
	read -r -a cmd <<<"$(workload_cmd "$2")"
	rm -f "$W/t.alys" "$W/daemon"
	"$bin" -q --http "127.0.0.1:$PORT" -o "$W/t.alys" -- "${cmd[@]}" >/dev/null &
	pid=$!
	watch "$pid" &
	wait "$pid"
	wait
	"$CONV" -q -f json --time 0s..1ns -o "$W/c.json" "$W/t.alys"
	python3 - "$W" "$(getconf CLK_TCK)" <<'PY'
import json, sys
w, hz = sys.argv[1], int(sys.argv[2])
ev = json.load(open(w + '/c.json'))['end']['events']
ticks, hwm = open(w + '/daemon').read().split()
print(ev, f'{int(ticks) / hz:.2f}', f'{int(hwm) / 1024:.0f}')
PY
}

echo "# bench/daemon_cost.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, median of $REPS rounds, --http and -o"
echo "# old: $OLD"
for i in $(seq "$REPS"); do
	for wl in deep compiler; do
		run "$NEW" "$wl" >>"$W/runs.$wl.new"
		run "$OLD" "$wl" >>"$W/runs.$wl.old"
	done
done
med() { sort -n -k"$2" "$1" | sed -n "$(((REPS + 1) / 2))p" | cut -d' ' -f"$2"; }
printf '%-10s %-5s %9s %8s %10s %8s\n' workload build events cpu_s ns/event rss_MB
for wl in deep compiler; do
	for b in new old; do
		f=$W/runs.$wl.$b
		ev=$(med "$f" 1) cpu=$(med "$f" 2) rss=$(med "$f" 3)
		printf '%-10s %-5s %9s %8s %10.0f %8s\n' "$wl" "$b" "$ev" "$cpu" \
			"$(echo "$cpu * 1000000000 / $ev" | bc -l)" "$rss"
		eval "${b}_cpu=$cpu ${b}_rss=$rss ${b}_ev=$ev"
	done
	# shellcheck disable=SC2154
	printf '%-10s new/old: CPU per event %.2f, peak RSS %.2f\n' "$wl" \
		"$(echo "($new_cpu / $new_ev) / ($old_cpu / $old_ev)" | bc -l)" \
		"$(echo "$new_rss / $old_rss" | bc -l)"
done
