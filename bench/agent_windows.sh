#!/usr/bin/env bash
# bench/agent_windows.sh: --duty windows with many processes under the agent
# (issue 22). N busy Crystal programs (sleeper, 2000 objects every 50 ms)
# traced by alys-bpf --all for SECS seconds, the refill probes attached as
# uprobe_multi links (the default where the kernel has them) and as perf
# uprobes (ALYS_BPF_NO_MULTI), modes interleaved ROUNDS times. Perf uprobes
# queue on the trace events' host-wide mutex while other processes' windows
# detach, so their windows open late or not at all. Prints, per mode and
# round, from the agent's /metrics at the end, summed over the programs: the
# windows attached, those late (missed because the last window's probes
# were still going or coming, or ended before their own were attached), and
# the events recorded per program.
#   bench/agent_windows.sh [N] [SECS] [ROUNDS]   (as root, after make; 9 20 2)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-9} SECS=${2:-20} ROUNDS=${3:-2}
P=$ROOT/tests/build/programs
W=$(mktemp -d /tmp/alys-windows.XXXXXX)
[ -x "$P/sleeper" ] || { echo "needs tests/build/programs (tests/build-programs.sh)" >&2; exit 1; }
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$W"' EXIT

run() {	# MODE: one line
	local mode=$1 ag url i
	PIDS=()
	for ((i = 0; i < N; i++)); do
		"$P/sleeper" 0 /dev/null 2000 >/dev/null &
		PIDS+=($!)
	done
	env $([ "$mode" = perf ] && echo ALYS_BPF_NO_MULTI=1) \
		"$ROOT/bin/alys-bpf" --all --only-comm sleeper --http 0 2>"$W/err" &
	ag=$!
	until [ "$(grep -c '^alys-bpf: tracing pid' "$W/err")" -ge "$N" ]; do sleep 0.2; done
	sleep "$SECS"
	url=$(sed -n 's|^alys-bpf: serving the agent.s metrics at \(http://[0-9.:]*/metrics\)$|\1|p' "$W/err")
	curl -s "$url" | awk -v mode="$mode" -v n="$N" '
		/name="duty_windows"/ { w += $2 }
		/name="duty_late"/ { l += $2 }
		/^alys_events_total\{/ { e += $2 }
		END { printf "%-6s %8d %6d %14.0f\n", mode, w, l, e / n }'
	kill -TERM $ag
	wait $ag || true
	kill "${PIDS[@]}" 2>/dev/null
	wait "${PIDS[@]}" 2>/dev/null || true
}

echo "# bench/agent_windows.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, $N programs, ${SECS} s traced"
printf '%-6s %8s %6s %14s\n' links windows late events/program
for ((r = 0; r < ROUNDS; r++)); do
	run multi
	run perf
done
