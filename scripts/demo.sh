#!/usr/bin/env bash
# scripts/demo.sh -- what `make demo` runs after building bin/: build the
# bundled demo program (demo/demo.cr), trace it with alys-bpf, convert the
# trace, and show where it allocates. Needs root (alys-bpf loads BPF).
#
# Writes into demo-out/:
#   demo            the demo program (crystal build, shared libgc)
#   demo.alys       the trace
#   demo.folded     folded stacks (alys_converter -f folded-stacks)
#   demo.json       every event with its symbolized stack (-f json)
#   demo.svg        interactive flamegraph (-f flamegraph), open in a browser
#   demo.pb.gz      pprof profile (-f pprof): go tool pprof, Parca, Pyroscope
#   demo.txt        allocation report (-f report): top sites and types
#
# Environment: DEMO_ORDERS (default 10000) sets the demo's workload;
# ALYS_BIN (default bin/) where alys-bpf and alys_converter are.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${ALYS_BIN:-$ROOT/bin}
OUT=demo-out
ORDERS=${DEMO_ORDERS:-10000}

die() { echo "demo: ERROR: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }

command -v crystal >/dev/null 2>&1 ||
	die "crystal is not installed (run scripts/setup-debian.sh as root)"
for b in alys-bpf alys_converter; do
	[ -x "$BIN/$b" ] || die "$BIN/$b missing: run 'make' first"
done
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || die "alys-bpf needs root; run 'make demo' as root"
	SUDO=(sudo)
fi

mkdir -p "$OUT"

step "building demo/demo.cr -> $OUT/demo"
if [ "$OUT/demo" -nt demo/demo.cr ]; then
	echo "up to date"
else
	t0=$SECONDS
	crystal build --no-color demo/demo.cr -o "$OUT/demo"
	echo "built in $((SECONDS - t0)) s"
fi

step "tracing: ${SUDO[*]:+${SUDO[*]} }$BIN/alys-bpf -o $OUT/demo.alys -- $OUT/demo $ORDERS"
rm -f "$OUT/demo.alys"
t0=$(date +%s%N)
set +e
"${SUDO[@]}" "$BIN/alys-bpf" -o "$OUT/demo.alys" -- "$OUT/demo" "$ORDERS" >"$OUT/demo.stdout"
rc=$?
set -e
t1=$(date +%s%N)
[ "$rc" -eq 0 ] || die "alys-bpf exited with status $rc"
[ -s "$OUT/demo.alys" ] || die "no trace written to $OUT/demo.alys"
echo "demo printed $(wc -l <"$OUT/demo.stdout") lines (in $OUT/demo.stdout);" \
	"traced run took $(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", ns / 1e9 }') s;" \
	"trace: $(du -h "$OUT/demo.alys" | cut -f1)"

step "converting"
"$BIN/alys_converter" -f folded-stacks -o "$OUT/demo.folded" "$OUT/demo.alys"
# Every event with its stack is large (GBs for this trace): keep 8 frames.
"$BIN/alys_converter" -f json --depth 8 -o "$OUT/demo.json" "$OUT/demo.alys"
echo "$OUT/demo.folded ($(du -h "$OUT/demo.folded" | cut -f1)), $OUT/demo.json ($(du -h "$OUT/demo.json" | cut -f1), 8 frames per stack)"

step "per GC function (from $OUT/demo.folded)"
awk '{ n = $NF; k = split(substr($0, 1, length($0) - length(n) - 1), f, ";")
       by[f[k]] += n; total += n }
     END { for (g in by) printf "  %-20s %12d\n", g, by[g]; printf "  %-20s %12d\n", "total", total }' \
	"$OUT/demo.folded"

"$BIN/alys_converter" -q -f flamegraph -o "$OUT/demo.svg" "$OUT/demo.alys"
"$BIN/alys_converter" -q -f pprof -o "$OUT/demo.pb.gz" "$OUT/demo.alys"
"$BIN/alys_converter" -q -f report -o "$OUT/demo.txt" "$OUT/demo.alys"
echo "$OUT/demo.svg (flamegraph), $OUT/demo.pb.gz (pprof), $OUT/demo.txt (report)"

step "top 10 allocation sites by count (from $OUT/demo.txt)"
# sed reads the whole report: no SIGPIPE for a writer under pipefail
sed -n '/^Top allocation sites by count/,/^$/p' "$OUT/demo.txt" | sed -n '3,13p'

step "allocations by type (from $OUT/demo.txt)"
sed -n '/^Allocations by type/,/^$/p' "$OUT/demo.txt" | sed -n '3,13p'

step "done: outputs in $OUT/"
