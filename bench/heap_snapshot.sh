#!/usr/bin/env bash
# bench/heap_snapshot.sh: what a heap snapshot costs (issue 14), for heaps
# of about 10 MB, 100 MB and 1 GB. tests/programs/heap_graph.cr (built
# with --release) holds N nodes of 250 leaves each (40 bytes a leaf with its
# share of the array buffer) and as many leaves again as garbage; while it
# sleeps, alys-bpf --heap-snapshot --pid copies the heap. Prints, per size:
# the heap the snapshot copied, how long the process was stopped (its own
# measure, also in the trace), the trace's size, and the converter's -f
# heap time and peak memory; the stop time per MiB of heap, so that sizes
# compare.
#   bench/heap_snapshot.sh [SIZES_MB]   (as root, after make; "10 100 1000")
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${1:-10 100 1000}
ALYS=$ROOT/bin/alys-bpf
CONV=$ROOT/bin/alys_converter
W=$(mktemp -d /tmp/alys-heap.XXXXXX)
trap 'rm -rf "$W"' EXIT
crystal build --release --no-color -o "$W/heap_graph" "$ROOT/tests/programs/heap_graph.cr"
printf '%8s %10s %10s %10s %12s %10s %12s %14s\n' size_mb heap_mib stop_ms ms_per_mib \
	trace_mib analyse_s analyse_mib reachable_objs
for mb in $SIZES; do
	n=$((mb * 1024 * 1024 / 40 / 250))
	"$W/heap_graph" $n 250 600 >"$W/out" 2>&1 &
	pid=$!
	for _ in $(seq 1200); do grep -q '^READY' "$W/out" && break; sleep 0.1; done
	"$ALYS" --heap-snapshot --pid $pid -o "$W/snap.alys" 2>"$W/err"
	kill $pid
	wait $pid 2>/dev/null || true
	read -r heap stop < <(sed -n 's/.*blocks (\([0-9.]*\) MiB).*stopped \([0-9.]*\) ms.*/\1 \2/p' "$W/err")
	/usr/bin/time -f '%e %M' -o "$W/time" "$CONV" -q -f heap -o "$W/heap.txt" "$W/snap.alys"
	read -r secs kib <"$W/time"
	objs=$(sed -n 's/^Reachable from the roots: \([0-9]*\) objects.*/\1/p' "$W/heap.txt")
	awk -v mb="$mb" -v heap="$heap" -v stop="$stop" -v size="$(stat -c %s "$W/snap.alys")" \
		-v secs="$secs" -v kib="$kib" -v objs="$objs" 'BEGIN {
		printf "%8s %10s %10s %10.2f %12.1f %10s %12d %14s\n", mb, heap, stop,
			stop / heap, size / 1048576, secs, kib / 1024, objs }'
	rm -f "$W/snap.alys"
done
