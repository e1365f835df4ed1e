#!/usr/bin/env bash
# bench/probe_cost.sh: what a uprobe costs per hit, by the instruction it
# replaces, measured side by side in one run. The kernel emulates push, jmp,
# call, jcc and nop, single-steps everything else, and since Linux 6.x turns
# a probe on a 5-byte nop into a call (optimized uprobe). This is why
# alys-bpf places its probes (src/gc/probe_place.c). Run as root after make.
#   bench/probe_cost.sh [COUNT] [REPS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COUNT=${1:-50000}
REPS=${2:-3}
W=$(mktemp -d /tmp/alys-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
gcc -O2 -o "$W/insn_targets" "$ROOT/bench/insn_targets.c"
gcc -O2 -o "$W/attach_empty" "$ROOT/bench/attach_empty.c" -lbpf
OBJ=$ROOT/build/alys.bpf.o
[ -f "$OBJ" ] || { echo "run make first ($OBJ missing)" >&2; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "# uprobe cost by first instruction, $(date -u +%F), $(uname -r), $(nproc) CPUs"
echo "# ns per call, median of $REPS runs of $COUNT calls"
printf "%-6s %-14s %9s %9s %12s\n" insn kernel untraced uprobe "+uretprobe"
for k in push jmp jmp32 nop nop5 mov xor; do
	case $k in
	mov | xor) how=single-step ;;
	nop5) how=optimized ;;
	*) how=emulated ;;
	esac
	u=$(for i in $(seq "$REPS"); do "$W/insn_targets" $k "$COUNT"; done | median)
	p=$(for i in $(seq "$REPS"); do "$W/attach_empty" "$OBJ" "$W/insn_targets" f_$k 0 -- "$W/insn_targets" $k "$COUNT"; done | median)
	r=$(for i in $(seq "$REPS"); do "$W/attach_empty" "$OBJ" "$W/insn_targets" f_$k 1 -- "$W/insn_targets" $k "$COUNT"; done | median)
	echo "$k $how $u $p $r" | awk '{ printf "%-6s %-14s %9.1f %9.0f %12.0f\n", $1, $2, $3, $4, $5 }'
done | tee "$W/table"
awk '$2 == "emulated" { e += $4; ne++ } $2 == "single-step" { s += $4; ns++ }
	END { printf "# single-stepped / emulated: %.1fx\n", (s / ns) / (e / ne) }' "$W/table"
