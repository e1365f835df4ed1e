#!/usr/bin/env bash
# bench/compiler.sh: a full trace of a real program, Debian's `crystal`
# compiler type-checking a 10-line program that requires json and
# http/server (`crystal build --no-codegen`, its cache warm), side by side
# in one run (issue 38). Modes, interleaved round-robin:
#   untraced
#   floor         alys-bpf --empty-probes: an entry and a return probe on
#                 every call, doing nothing (issue 38's floor)
#   floor-entry   the same without the return probe: one trap a call, the
#                 floor of a call whose block is read at entry
#   no-liveness   --no-liveness: stacks, no following of blocks
#   full          alys-bpf defaults (DWARF stacks, liveness)
# and, with ALYS_OLD_BIN=DIR (a build of an earlier commit), old-no-liveness
# and old-full run with DIR/alys-bpf. MODES="floor no-liveness ..." runs
# those only.
# Prints the median wall time of REPS rounds and its ratio to the floor;
# for the traced modes (their median run): events, trace bytes per event,
# the allocation programs' own time per event (prog_ns) and, where an entry
# and a return program run (not one uprobe session program), each one's per
# call (kernel.bpf_stats_enabled, read by bpftool while the tracer runs: in
# one more run of each traced mode after the rounds, not in the timed ones,
# where the statistics' two clock reads a program run would lengthen the
# floor's two runs a call more than a traced call's one: 0.36 s of its 3.2),
# the share of calls finished at entry (pred%: their block read there, no
# return probe), frames reused from the last walk per event,
# stack nodes sent and resent, liveness scans (count, ms in all, blocks
# judged per scan), and the daemon's CPU seconds and peak RSS (its own, from
# /proc, not the compiler's). Then `alys_converter -f report` on the full
# trace: CPU seconds and peak RSS.
#   bench/compiler.sh [REPS]   (root, after make; default 3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${1:-3}
ALYS=$ROOT/bin/alys-bpf CONV=$ROOT/bin/alys_converter
command -v crystal >/dev/null || { echo "crystal: not installed (scripts/setup-debian.sh)" >&2; exit 1; }
W=$(mktemp -d /tmp/alys-compiler.XXXXXX)
trap 'sysctl -qw kernel.bpf_stats_enabled=0; rm -rf "$W"' EXIT
cp "$ROOT/bench/workloads/compiler_input.cr" "$W/prog.cr"
export CRYSTAL_CACHE_DIR=$W/cache
CMD=(crystal build --no-codegen --no-color "$W/prog.cr" -o "$W/prog")
"${CMD[@]}" >/dev/null	# warm the cache

# watch PID: until it exits, the last bpftool reading of the programs and
# the daemon's own CPU ticks and peak RSS (KiB)
watch() {
	local pid=$1 ticks hwm last_hwm=
	while kill -0 "$pid" 2>/dev/null; do
		[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = 1 ] &&
			bpftool prog show -j >"$W/p.json.tmp" 2>/dev/null &&
			grep -q gc_alloc "$W/p.json.tmp" && mv "$W/p.json.tmp" "$W/p.json"
		ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || break
		# an exiting daemon's status has no VmHWM: the last one read stays
		hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || break
		last_hwm=${hwm:-${last_hwm:-0}}
		echo "$ticks $last_hwm" >"$W/daemon"
		sleep 0.3
	done
}

run() {
	local mode=$1 bin=$ALYS opt=() pid t0 t1
	rm -f "$W/t.alys" "$W/p.json" "$W/daemon"
	t0=$(date +%s%N)
	case $mode in
	untraced)
		"${CMD[@]}" >/dev/null
		t1=$(date +%s%N)
		echo "$(((t1 - t0) / 1000000)) -"
		return ;;
	floor | floor-entry) opt=(--empty-probes) ;;
	no-liveness | old-no-liveness) opt=(--no-liveness) ;;
	esac
	[[ $mode == old-* ]] && bin=$ALYS_OLD_BIN/alys-bpf
	ALYS_BPF_EMPTY_ENTRY_ONLY=$([ "$mode" = floor-entry ] && echo 1) \
		"$bin" -q "${opt[@]}" -o "$W/t.alys" -- "${CMD[@]}" >/dev/null &
	pid=$!
	watch "$pid" &
	wait "$pid"
	t1=$(date +%s%N)
	wait
	if [[ $mode == floor* ]]; then
		echo "$(((t1 - t0) / 1000000)) -"
		return
	fi
	"$CONV" -q -f json --time 0s..1ns -o "$W/c.json" "$W/t.alys"
	python3 - "$W" "$(((t1 - t0) / 1000000))" "$(stat -c %s "$W/t.alys")" \
		"$(getconf CLK_TCK)" <<'PY'
import json, sys
w, ms, size, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = json.load(open(w + '/c.json'))
c, cols = d['counters'], d.get('collections', [])
# the allocation programs: an entry and a return program, or one uprobe
# session program running at both
calls = d.get('end', {}).get('events', 0)
entry = ret = '-'
total = 0
try:
    for p in json.load(open(w + '/p.json')):
        name, n = p.get('name', ''), p.get('run_cnt')
        if not n or not (name in ('gc_alloc_entry', 'gc_alloc_return') or
                         name.startswith('gc_alloc_sess')):
            continue
        total += p['run_time_ns']
        if name == 'gc_alloc_entry':
            entry = f"{p['run_time_ns'] / n:.0f}"
        elif name == 'gc_alloc_return':
            ret = f"{p['run_time_ns'] / n:.0f}"
except (OSError, ValueError):
    pass
ticks, hwm = open(w + '/daemon').read().split()
scans = [x for x in cols if x.get('scan_ns')]
judged = sum(x['judged'] for x in scans) / len(scans) if scans else 0
print(ms, calls, f'{size / max(calls, 1):.1f}', f'{total / max(calls, 1):.0f}', entry, ret,
      f"{100 * c.get('calls_predicted', 0) / max(calls, 1):.0f}",
      f"{c.get('frames_reused', 0) / max(calls, 1):.1f}", c.get('stack_nodes', 0),
      c.get('stack_resent', 0), len(scans), f"{sum(x['scan_ns'] for x in scans) / 1e6:.0f}",
      f'{judged:.0f}', f'{int(ticks) / hz:.1f}', f'{int(hwm) / 1024:.0f}')
PY
	if [ "$mode" = full ]; then cp "$W/t.alys" "$W/full.alys"; fi
}

MODES=${MODES:-untraced floor floor-entry no-liveness full${ALYS_OLD_BIN:+ old-no-liveness old-full}}
sysctl -qw kernel.bpf_stats_enabled=0
echo "# bench/compiler.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, median of $REPS rounds, $(crystal --version | sed -n 1p)"
for i in $(seq "$REPS"); do
	for mode in $MODES; do
		run "$mode" >>"$W/runs.$mode"
	done
done
# the programs' own time: one run of each traced mode with the statistics on
sysctl -qw kernel.bpf_stats_enabled=1
for mode in $MODES; do
	case $mode in untraced | floor*) ;; *) run "$mode" | cut -d' ' -f4-6 >"$W/stats.$mode" ;; esac
done
sysctl -qw kernel.bpf_stats_enabled=0
# median by wall time, the statistics' columns from their own run
median() {
	sort -n "$W/runs.$1" | sed -n "$(((REPS + 1) / 2))p" |
		if [ -f "$W/stats.$1" ]; then
			read -r -a f; read -r -a st <"$W/stats.$1"
			f[3]=${st[0]} f[4]=${st[1]} f[5]=${st[2]}
			echo "${f[*]}"
		else cat; fi
}
floor=$(median floor | cut -d' ' -f1)
printf '%-16s %8s %7s %8s %7s %7s %8s %7s %5s %7s %9s %7s %6s %8s %8s %7s %8s\n' mode wall_ms x_floor \
	events B/event prog_ns entry_ns ret_ns pred% reused nodes resent scans scan_ms judged/scan \
	d_cpu_s d_rss_MB
for mode in $MODES; do
	read -r ms rest < <(median "$mode")
	if [ "$rest" = - ]; then
		printf '%-16s %8d %7.2f\n' "$mode" "$ms" "$(echo "$ms / $floor" | bc -l)"
	else
		# shellcheck disable=SC2086
		printf '%-16s %8d %7.2f %8s %7s %7s %8s %7s %5s %7s %9s %7s %6s %8s %8s %7s %8s\n' "$mode" "$ms" \
			"$(echo "$ms / $floor" | bc -l)" $rest
	fi
done
if [ -f "$W/full.alys" ]; then
	/usr/bin/time -f '%U %S %M' -o "$W/conv.time" "$CONV" -q -f report -o "$W/r.txt" "$W/full.alys"
	read -r u s kb <"$W/conv.time"
	echo "alys_converter -f report (the last full trace): $(echo "$u + $s" | bc) CPU s, $((kb / 1024)) MB peak"
fi
