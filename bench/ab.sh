#!/usr/bin/env bash
# bench/ab.sh: this build against another, traced at the same time: one
# tracer and its program pinned to each CPU, the CPUs swapped every round.
# On a VM whose speed drifts by ±10% from minute to minute, runs one after
# the other differ by more than a change does; two runs at once see the
# same drift. WORKLOAD: compiler (default: Debian's `crystal` compiler,
# bench/compiler.sh's), alloc_heavy or json_parse (bench/overhead's,
# built --release) or deep_stacks (bench/deep_stacks.sh's default run,
# tests/programs/deep_stacks.cr --release, 262144 paths 100 deep). Prints,
# each round and as medians, each build's time (the compiler's wall time;
# the others' own, start-up excluded) and its
# BPF programs' own time per call (kernel.bpf_stats_enabled, read from the
# tracer's own program descriptors in /proc/PID/fdinfo; "s:N" for a uprobe
# session program, which runs at entries and at the returns not skipped).
#   ALYS_OLD_BIN=DIR [WORKLOAD=...] bench/ab.sh [REPS] [ALYS-OPTIONS...]
#   (root, after make; REPS default 4; e.g. --no-liveness)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${1:-4}
shift || true
OPTS=("$@")
[ -n "${ALYS_OLD_BIN:-}" ] || { echo "ALYS_OLD_BIN: the other build's bin directory" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "two CPUs needed, one for each build" >&2; exit 1; }
command -v crystal >/dev/null || { echo "crystal: not installed (scripts/setup-debian.sh)" >&2; exit 1; }
WORKLOAD=${WORKLOAD:-compiler}
W=$(mktemp -d /tmp/alys-ab.XXXXXX)
trap 'sysctl -qw kernel.bpf_stats_enabled=0; rm -rf "$W"' EXIT
export CRYSTAL_CACHE_DIR=$W/cache
case $WORKLOAD in
compiler)
	cp "$ROOT/bench/workloads/compiler_input.cr" "$W/prog.cr"
	crystal build --no-codegen --no-color "$W/prog.cr" -o "$W/prog" >/dev/null	# warm the cache
	cmd() { echo crystal build --no-codegen --no-color "$W/prog.cr" -o "$W/prog.$1"; } ;;
alloc_heavy | json_parse)
	crystal build --release --no-color -o "$W/$WORKLOAD" "$ROOT/bench/workloads/$WORKLOAD.cr"
	declare -A ARGS=([alloc_heavy]=20000 [json_parse]=40)
	cmd() { echo "$W/$WORKLOAD" "${ARGS[$WORKLOAD]}"; } ;;
deep_stacks)
	crystal build --release --no-color -o "$W/deep" "$ROOT/tests/programs/deep_stacks.cr"
	cmd() { echo "$W/deep" 262144 100 2; } ;;
*)
	echo "WORKLOAD: compiler, alloc_heavy, json_parse or deep_stacks" >&2
	exit 1 ;;
esac
sysctl -qw kernel.bpf_stats_enabled=1

# stats PID TAG: until PID exits, its allocation programs' run count and
# time, from the fds it holds (the last reading is kept)
stats() {
	local pid=$1 tag=$2 fd info counts id name
	while kill -0 "$pid" 2>/dev/null; do
		for fd in /proc/"$pid"/fdinfo/*; do
			info=$(cat "$fd" 2>/dev/null) || continue
			id=$(awk '/^prog_id:/ { print $2 }' <<<"$info")
			[ -n "$id" ] || continue
			name=$(bpftool prog show id "$id" 2>/dev/null | sed -n 's/^[0-9]*: [a-z_]*  name \([a-z_]*\) .*/\1/p')
			case $name in
			gc_alloc_entry | gc_alloc_return | gc_alloc_session)
				# a tracer closing its fds leaves fdinfo without the
				# counts: such a reading does not replace the last one
				counts=$(awk '/^run_time_ns:/ { t = $2 } /^run_cnt:/ { c = $2 }
					END { if (c > 0) print c, t }' <<<"$info")
				[ -z "$counts" ] || echo "$counts" >"$W/$tag.$name" ;;
			esac
		done
		sleep 0.2
	done
}

# one BIN CPU TAG: the workload traced, pinned to CPU; "TAG ms entry_ns ret_ns"
one() {
	local bin=$1 cpu=$2 tag=$3 t0 pid c t ms
	rm -f "$W/$tag".*
	t0=$(date +%s%N)
	# shellcheck disable=SC2046
	taskset -c "$cpu" "$bin/alys-bpf" -q "${OPTS[@]}" -o "$W/$tag.alys" -- $(cmd "$tag") \
		>"$W/$tag.out" &
	pid=$!
	stats "$pid" "$tag" &
	wait "$pid"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$WORKLOAD" = compiler ] || ms=$(sed -n 's/.*elapsed_ms=\([0-9]*\).*/\1/p' "$W/$tag.out")
	echo -n "$tag $ms"
	wait
	# a program loaded but never run (a build that skips it): "-"; one
	# uprobe session program, run at the entries and at the returns not
	# skipped: "s:" its time a run
	if { read -r c t <"$W/$tag.gc_alloc_session"; } 2>/dev/null && [ "${c:-0}" -gt 0 ]; then
		echo " s:$((t / c)) -"
		return
	fi
	{ read -r c t <"$W/$tag.gc_alloc_entry"; } 2>/dev/null && [ "${c:-0}" -gt 0 ] &&
		echo -n " $((t / c))" || echo -n " -"
	{ read -r c t <"$W/$tag.gc_alloc_return"; } 2>/dev/null && [ "${c:-0}" -gt 0 ] &&
		echo " $((t / c))" || echo " -"
}

echo "# bench/ab.sh, $(date -u +%F), $(uname -r), $WORKLOAD, $REPS rounds, options: ${OPTS[*]:-(defaults)}, old: $ALYS_OLD_BIN"
printf '%-6s %-4s %8s %9s %7s\n' round bin ms entry_ns ret_ns
for r in $(seq "$REPS"); do
	if [ $((r % 2)) = 1 ]; then cn=0 co=1; else cn=1 co=0; fi
	one "$ROOT/bin" "$cn" new >"$W/r.new" &
	one "$ALYS_OLD_BIN" "$co" old >"$W/r.old" &
	wait
	for tag in new old; do
		read -r _ ms e rt <"$W/r.$tag"
		printf '%-6s %-4s %8s %9s %7s\n' "$r" "$tag" "$ms" "$e" "$rt"
		echo "$ms $e $rt" >>"$W/all.$tag"
	done
done
# median of each column
med() { sort -n | sed -n "$(((REPS + 1) / 2))p"; }
for tag in new old; do
	printf '%-6s %-4s %8s %9s %7s\n' median "$tag" "$(cut -d' ' -f1 "$W/all.$tag" | med)" \
		"$(cut -d' ' -f2 "$W/all.$tag" | med)" "$(cut -d' ' -f3 "$W/all.$tag" | med)"
done
