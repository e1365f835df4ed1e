#!/usr/bin/env bash
# bench/converter_throughput.sh: alys_converter throughput in events per
# second, per output format, with and without symbolization (--no-symbols),
# on a trace of at least 5 million events. Run after make.
#
#   bench/converter_throughput.sh [EVENTS] [REPS] [TRACE.alys...]
#
# The synthetic trace (tests/unit/test_converter_gen.c) has EVENTS events
# (default 5000000: 80% malloc, 10% realloc, 10% free) over 20000 distinct
# stacks of 12 frames drawn from 50000 distinct return addresses inside a
# debug-built Crystal program (tests/build/programs/callchain, from
# tests/build-programs.sh), so symbolization has real DWARF to read: far more
# distinct addresses than a real program's trace usually has. Any TRACE
# given (e.g. one taken with alys-bpf of a heavy program) is measured too.
# Output goes to /dev/null: the numbers are the converter's, not the disk's.
# Events per second are per CPU second (user + system): on a shared machine
# the wall time also counts the waits for a CPU.
# ALYS_BENCH_SYNTHETIC=FILE keeps the synthetic trace in FILE (reused when it
# exists: generating it takes a while).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EVENTS=${1:-5000000}
REPS=${2:-1}
shift $(($# < 2 ? $# : 2))
CONV=$ROOT/bin/alys_converter
PROG=$ROOT/tests/build/programs/callchain
[ -x "$CONV" ] || { echo "run make first ($CONV missing)" >&2; exit 1; }
[ -x "$PROG" ] || { echo "run tests/build-programs.sh tests/build/programs first ($PROG missing)" >&2; exit 1; }
W=$(mktemp -d /tmp/alys-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
gcc -O2 -o "$W/gen" "$ROOT/tests/unit/test_converter_gen.c" -lmsgpackc

# the executable segment of PROG, mapped at a PIE base as the kernel would
read -r off vaddr memsz < <(readelf -lW "$PROG" | awk '$1 == "LOAD" && / R E / { print $2, $3, $6; exit }')
build_id=$(readelf -n "$PROG" | awk '/Build ID/ { print $3; exit }')
SYNTH=${ALYS_BENCH_SYNTHETIC:-$W/synthetic.alys}
[ -s "$SYNTH" ] || python3 - "$EVENTS" "$PROG" "$build_id" $((off)) $((vaddr)) $((memsz)) <<'PY' | "$W/gen" >"$SYNTH"
import random, sys
events, prog, build_id = int(sys.argv[1]), sys.argv[2], sys.argv[3]
off, vaddr, memsz = (int(x) for x in sys.argv[4:7])
base, start = 0x555555554000, 1_000_000_000
r = random.Random(42)
out = sys.stdout
out.write(f"header alys-bpf 1 4242 {prog} {start}\n")
lo = base + (vaddr & ~0xfff)
out.write(f"mapping {lo:#x} {(base + vaddr + memsz + 0xfff) & ~0xfff:#x} {off & ~0xfff:#x} {prog} {build_id}\n")
pool = [base + vaddr + r.randrange(memsz) for _ in range(50000)]
nstacks = 20000
for s in range(1, nstacks + 1):
    out.write(f"stack {s} " + " ".join(f"{r.choice(pool):#x}" for _ in range(12)) + "\n")
live = []
lines = []
for i in range(events):
    ts = start + 1000 + i * 100
    stack = r.randrange(1, nstacks + 1)
    x = r.random()
    if x < 0.1 and live:
        a = live.pop(r.randrange(len(live)))
        lines.append(f"event 4 {ts} 100 0 {a:#x} 0 0 {stack} 0 0\n")
    elif x < 0.2 and live:
        k = r.randrange(len(live))
        old, new, size = live[k], 0x10000000 + 16 * i, r.randrange(16, 4096)
        live[k] = new
        lines.append(f"event 3 {ts} 100 {size} {new:#x} {old:#x} 0 {stack} {size} 0\n")
    else:
        size, a = r.randrange(16, 256), 0x10000000 + 16 * i
        live.append(a)
        if len(live) > 100000:
            live.pop(0)
        lines.append(f"event {r.choice((1, 2))} {ts} 100 {size} {a:#x} 0 0 {stack} {size} 0\n")
    if len(lines) >= 100000:
        out.writelines(lines)
        lines.clear()
out.writelines(lines)
out.write(f"end exit 0 {start + 1000 + events * 100} {events}\n")
PY

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure TRACE: one table for it
measure() {
	local trace=$1 n fmt sym secs rss
	n=$("$CONV" -q -f report -o - --no-symbols "$trace" |
		sed -n 's/^  Trace: .*, \([0-9]*\) events,.*/\1/p')
	echo "# $(basename "$trace"): $n events, $(($(stat -c %s "$trace") / 1048576)) MiB"
	printf "%-14s %-8s %8s %8s %12s %9s\n" format symbols "wall s" "CPU s" "events/CPU s" "peak MiB"
	for fmt in json folded-stacks pprof flamegraph report; do
		for sym in yes no; do
			local opt=()
			[ $sym = no ] && opt=(--no-symbols)
			: >"$W/times"
			for _ in $(seq "$REPS"); do
				/usr/bin/time -f "%e %M %U %S" -o "$W/time" "$CONV" -q -f $fmt "${opt[@]}" \
					-o /dev/null "$trace"
				cat "$W/time" >>"$W/times"
			done
			wall=$(awk '{ print $1 }' "$W/times" | median)
			rss=$(awk '{ print $2 }' "$W/times" | median)
			secs=$(awk '{ printf "%.2f\n", $3 + $4 }' "$W/times" | median)
			printf "%-14s %-8s %8s %8s %12s %9s\n" $fmt $sym "$wall" "$secs" \
				"$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')" \
				$((rss / 1024))
		done
	done
}

echo "# alys_converter throughput, $(date -u +%F), $(uname -r), $(nproc) CPUs, median of $REPS run(s)"
echo "# synthetic: 20000 stacks x 12 frames over 50000 addresses in $(basename "$PROG") (Crystal, DWARF)"
measure "$SYNTH"
for t in "$@"; do
	echo
	measure "$t"
done
