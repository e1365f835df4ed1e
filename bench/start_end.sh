#!/usr/bin/env bash
# bench/start_end.sh: what a trace costs before and after the program runs,
# builds interleaved ROUNDS times: `alys-bpf -v -o T -- alloc_known 100`
# (a program that runs for milliseconds), default full trace. Per build,
# medians of: the whole run's wall time, the BPF load (the -v line "BPF
# programs loaded in", or the time to the first probe line for a build
# without it) and the end: from the program's first allocations (the -v
# line "collector layout verified") to alys-bpf's exit, which is the
# program's few milliseconds, the probes detached and the trace closed. Builds: bin, bin with
# ALYS_BPF_SERIAL_LOAD=1 (one object, verified one program after another)
# and, with ALYS_OLD_BIN, another build.
#   bench/start_end.sh [ROUNDS]   (as root, after make; 5)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-5}
P=$ROOT/tests/build/programs
W=$(mktemp -d /tmp/alys-start.XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -x "$P/alloc_known" ] || { echo "needs tests/build/programs (tests/build-programs.sh)" >&2; exit 1; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# one NAME BIN [ENV...]: "wall_ms load_ms end_ms" of one run
one() {
	local bin=$2 t0 t1 load exit_ms
	shift 2
	t0=$(now_ms)
	env "$@" "$bin/alys-bpf" -v -o "$W/t.alys" -- "$P/alloc_known" 100 2>&1 >/dev/null |
		while IFS= read -r l; do echo "$(now_ms) $l"; done >"$W/log" || true
	t1=$(now_ms)
	load=$(sed -n 's/.* BPF programs loaded in \([0-9]*\) ms.*/\1/p' "$W/log")
	if [ -z "$load" ]; then	# an older build: up to its first probe line
		load=$(awk -v t0="$t0" '/ uprobe| uretprobe/ { print $1 - t0; exit }' "$W/log")
	fi
	ran=$(awk '/collector layout verified/ { print $1; exit }' "$W/log")
	echo "$((t1 - t0)) $load $((t1 - ${ran:-$t1}))"
}

declare -A runs
builds="new serial"
[ -n "${ALYS_OLD_BIN:-}" ] && builds="$builds old"
for ((r = 0; r < ROUNDS; r++)); do
	for b in $builds; do
		case $b in
		new) runs[$b]+="$(one $b "$ROOT/bin")"$'\n' ;;
		serial) runs[$b]+="$(one $b "$ROOT/bin" ALYS_BPF_SERIAL_LOAD=1)"$'\n' ;;
		old) runs[$b]+="$(one $b "$ALYS_OLD_BIN")"$'\n' ;;
		esac
	done
done
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "# bench/start_end.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, median of $ROUNDS rounds"
printf '%-8s %8s %8s %8s\n' build wall_ms load_ms end_ms
for b in $builds; do
	printf '%-8s %8s %8s %8s\n' "$b" \
		"$(printf '%s' "${runs[$b]}" | awk '{ print $1 }' | med)" \
		"$(printf '%s' "${runs[$b]}" | awk '{ print $2 }' | med)" \
		"$(printf '%s' "${runs[$b]}" | awk '{ print $3 }' | med)"
done
