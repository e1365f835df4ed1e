#!/usr/bin/env bash
# bench/agent_sessions.sh: what a process costs the agent to start tracing
# (issue 22), with the BPF object shared by the sessions of one libgc build
# (the default) and with one object a session (ALYS_BPF_NO_SHARE), modes
# interleaved ROUNDS times. N Crystal programs (sleeper, dynamic libgc) are
# started one at a time under alys-bpf --all, each once the last is traced.
# Prints, per mode and round: the first program's time from its start to
# the agent's "tracing pid" line (the object loaded and verified), the
# median of the others', and at the end the BPF programs the agent holds
# and their kernel memory (bpftool's bytes_memlock).
#   bench/agent_sessions.sh [N] [ROUNDS]   (as root, after make; 6 2)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-6} ROUNDS=${2:-2}
P=$ROOT/tests/build/programs
W=$(mktemp -d /tmp/alys-sessions.XXXXXX)
[ -x "$P/sleeper" ] || { echo "needs tests/build/programs (tests/build-programs.sh)" >&2; exit 1; }
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$W"' EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }

run() {	# MODE: one line
	local mode=$1 ag i pid t0 ms=() first rest progs ids
	PIDS=()
	: >"$W/err"
	env $([ "$mode" = own ] && echo ALYS_BPF_NO_SHARE=1) \
		"$ROOT/bin/alys-bpf" --all --only-comm sleeper 2>"$W/err" &
	ag=$!
	until grep -q '^alys-bpf: tracing every Crystal process' "$W/err"; do sleep 0.05; done
	for ((i = 0; i < N; i++)); do
		t0=$(now_ms)
		"$P/sleeper" 0 /dev/null 500 >/dev/null &
		pid=$!
		PIDS+=($pid)
		until grep -q "^alys-bpf: tracing pid $pid " "$W/err"; do sleep 0.01; done
		ms+=($(($(now_ms) - t0)))
	done
	first=${ms[0]}
	rest=$(printf '%s\n' "${ms[@]:1}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	ids=$(cat /proc/$ag/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -un)
	progs=$(bpftool -j prog show | python3 -c '
import json, sys
ids = set(map(int, sys.argv[1].split()))
ours = [p for p in json.load(sys.stdin) if p["id"] in ids]
print(len(ours), sum(p.get("bytes_memlock", 0) for p in ours) // 1024)' "$ids")
	printf '%-6s %10d %12d %9s %12s\n' "$mode" "$first" "$rest" ${progs% *} ${progs#* }
	kill -TERM $ag
	wait $ag || true
	kill "${PIDS[@]}" 2>/dev/null
	wait "${PIDS[@]}" 2>/dev/null || true
}

echo "# bench/agent_sessions.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, $N programs"
printf '%-6s %10s %12s %9s %12s\n' object first_ms others_ms programs memlock_KiB
for ((r = 0; r < ROUNDS; r++)); do
	run shared
	run own
done
