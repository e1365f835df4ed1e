#!/usr/bin/env bash
# bench/start_end.sh: what a trace costs before and after the program runs,
# builds interleaved ROUNDS times: `alys-bpf -v -o T -- alloc_known 100`
# (a program that runs for milliseconds), default full trace; with
# WORKLOAD=compiler, `crystal --version` (Debian's compiler: 21 files and
# 1.7M unwind rows to build, ~700 allocations). Per build,
# medians of: the whole run's wall time, the unwind tables' build (the -v
# line "unwind tables: ... built in"; before 2026-11-28 that summed each
# file's time, and the rows' upload into the BPF map came after it,
# unmeasured), the BPF load (the -v line "BPF
# programs loaded in", or the time to the first probe line for a build
# without it) and the end: from the program's first allocations (the -v
# line "collector layout verified") to alys-bpf's exit, which is the
# program's few milliseconds, the probes detached and the trace closed. Builds: bin, bin with
# ALYS_BPF_SERIAL_LOAD=1 (one object, verified one program after another)
# and, with ALYS_OLD_BIN, another build.
#   [WORKLOAD=compiler] bench/start_end.sh [ROUNDS]   (as root, after make; 5)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-5}
P=$ROOT/tests/build/programs
W=$(mktemp -d /tmp/alys-start.XXXXXX)
trap 'rm -rf "$W"' EXIT
case ${WORKLOAD:-alloc_known} in
alloc_known)
	CMD=("$P/alloc_known" 100)
	[ -x "$P/alloc_known" ] ||
		{ echo "needs tests/build/programs (tests/build-programs.sh)" >&2; exit 1; } ;;
compiler)
	CMD=(crystal --version)
	command -v crystal >/dev/null ||
		{ echo "crystal: not installed (scripts/setup-debian.sh)" >&2; exit 1; } ;;
*) echo "WORKLOAD: alloc_known or compiler" >&2; exit 1 ;;
esac

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# one NAME BIN [ENV...]: "wall_ms load_ms end_ms tables_ms" of one run
one() {
	local bin=$2 t0 t1 load exit_ms
	shift 2
	t0=$(now_ms)
	env "$@" "$bin/alys-bpf" -v -o "$W/t.alys" -- "${CMD[@]}" 2>&1 >/dev/null |
		while IFS= read -r l; do echo "$(now_ms) $l"; done >"$W/log" || true
	t1=$(now_ms)
	load=$(sed -n 's/.* BPF programs loaded in \([0-9]*\) ms.*/\1/p' "$W/log")
	if [ -z "$load" ]; then	# an older build: up to its first probe line
		load=$(awk -v t0="$t0" '/ uprobe| uretprobe/ { print $1 - t0; exit }' "$W/log")
	fi
	ran=$(awk '/collector layout verified/ { print $1; exit }' "$W/log")
	tables=$(sed -n 's/.* unwind tables: .* built in \([0-9]*\) ms.*/\1/p' "$W/log")
	echo "$((t1 - t0)) $load $((t1 - ${ran:-$t1})) ${tables:-0}"
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
echo "# bench/start_end.sh, $(date -u +%F), $(uname -r), $(nproc) CPUs, median of $ROUNDS rounds, ${CMD[*]##*/}"
printf '%-8s %8s %9s %8s %8s\n' build wall_ms tables_ms load_ms end_ms
for b in $builds; do
	printf '%-8s %8s %9s %8s %8s\n' "$b" \
		"$(printf '%s' "${runs[$b]}" | awk '{ print $1 }' | med)" \
		"$(printf '%s' "${runs[$b]}" | awk '{ print $4 }' | med)" \
		"$(printf '%s' "${runs[$b]}" | awk '{ print $2 }' | med)" \
		"$(printf '%s' "${runs[$b]}" | awk '{ print $3 }' | med)"
done
