#!/usr/bin/env bash
# bench/converter_scale.sh: alys_converter's peak memory and events per CPU
# second on a compiler-sized trace (issue 19): -f report, -f pprof and
# -f folded-stacks, output to a file as a user would write it.
#   bench/converter_scale.sh [TRACE.alys]     (root, after make)
# Without TRACE, one is taken: tests/programs/deep_stacks.cr --release
# 262144 100 20 (524,288 distinct stacks of ~108 frames, ~10.5M allocations
# and as many inferred frees). ALYS_OLD_BIN=DIR also runs DIR/alys_converter
# (e.g. a build of an earlier commit) on the same trace, side by side, and
# says whether its output is byte for byte the same.
# Columns: events the trace holds (allocations and frees, as the report
# counts them); user + system CPU seconds; events per CPU second; peak RSS;
# peak RSS scaled to 10M events.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/alys-convscale.XXXXXX)
trap 'rm -rf "$W"' EXIT
TRACE=${1:-}
if [ -z "$TRACE" ]; then
	crystal build --release --no-color -o "$W/deep" "$ROOT/tests/programs/deep_stacks.cr"
	TRACE=$W/deep.alys
	"$ROOT/bin/alys-bpf" -q -o "$TRACE" -- "$W/deep" 262144 100 20 >/dev/null
fi
events=$("$ROOT/bin/alys_converter" -q -f report -o - "$TRACE" --no-symbols |
	awk '/^  Trace:/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^events/) { gsub(",", "", $i); print $i } }')
printf '# bench/converter_scale.sh, %s, %s, %s CPUs\n' "$(date +%F)" "$(uname -r)" "$(nproc)"
printf '# %s: %s events, %s MiB\n' "$TRACE" "$events" $(( $(stat -c %s "$TRACE") >> 20 ))
printf '%-10s %-14s %8s %12s %9s %13s %s\n' converter format "CPU s" "events/CPU s" "peak MiB" "MiB/10M ev" output
for fmt in report pprof folded-stacks; do
	for who in new old; do
		bin=$ROOT/bin
		if [ "$who" = old ]; then
			[ -n "${ALYS_OLD_BIN:-}" ] || continue
			bin=$ALYS_OLD_BIN
		fi
		/usr/bin/time -f '%U %S %M' -o "$W/time" "$bin/alys_converter" -q -f "$fmt" \
			-o "$W/$who.$fmt" "$TRACE"
		read -r user sys kb <"$W/time"
		same=
		if [ "$who" = old ]; then
			cmp -s "$W/new.$fmt" "$W/old.$fmt" && same="the same as new" || same="DIFFERS from new"
		fi
		awk -v who="$who" -v fmt="$fmt" -v u="$user" -v s="$sys" -v kb="$kb" -v ev="$events" -v same="$same" \
			'BEGIN { cpu = u + s; printf "%-10s %-14s %8.2f %12.0f %9.0f %13.0f %s\n", who, fmt, cpu,
				 ev / cpu, kb / 1024, kb / 1024 * 1e7 / ev, same }'
	done
	rm -f "$W"/*."$fmt"
done
