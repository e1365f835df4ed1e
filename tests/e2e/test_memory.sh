#!/usr/bin/env bash
# End-to-end: where RSS goes (issue 40), on tests/programs/memory_parts.cr,
# whose truth is known: 100 fibers blocked, each having written 256 KiB of
# its stack, and 64 MiB kept alive in buffers of one size class.
#   --pid, detached while the program waits (the detach takes a sample):
#     the parts add up to the RSS the test reads itself (/proc/PID/status)
#     within 5%; the fibers' stacks are within 10% of 100 x 256 KiB; the
#     live heap within 10% of 64 MiB; the fibers listed are 100 and a few.
#   launched: the heap's growths, with the stacks that needed them: their
#     bytes add up to the collector's heap as its blocks say (within 2%),
#     and most come from the program's allocation line; the report's
#     "Memory" section, the JSON, the timeline's panel; /metrics' parts.
# Shared and static libgc, a release build, the toolchain matrix (the
# official tarballs' clang libgc among them).
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T

FIBERS=100
STACK_KIB=256
LIVE_MIB=64

# last_sample NAME: the last memory sample's fields, space-separated:
# rss heap_resident live fiber_stacks fibers malloc anon files in_use free unmapped
last_sample() {
	"$BIN/alys_converter" -q -f json -o - "$T/$1.alys" | "$ALYS_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
m = d["memory"][-1] if d["memory"] else None
if m:
    print(m["rss"], m["heap_resident"], m["live"], m["fiber_stacks"], m["fibers"], m["malloc"],
          m["anon"], m["files"], m["heap_in_use"], m["heap_free"], m["heap_unmapped"])
else:
    print("none")
'
}

# growths NAME: "bytes site" a line, site the first memory_parts.cr frame
growths() {
	"$BIN/alys_converter" -q -f json -o - "$T/$1.alys" | "$ALYS_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
st = {s["id"]: s for s in d["stacks"]}
for g in d["heap_growths"]:
    fr = st[g["stack_id"]]["frames"] if g["stack_id"] in st else []
    site = next((f"line{f['"'"'line'"'"']}" for f in fr if f.get("file", "").endswith("memory_parts.cr")), "-")
    print(g["bytes"], site)
'
}

# The line of memory_parts.cr that allocates the live buffers.
BUF_LINE=$(grep -n 'keep << Bytes.new(2047' "$ALYS_ROOT/tests/programs/memory_parts.cr" | cut -d: -f1)

for v in memory_parts memory_parts-static memory_parts-release $(gc_matrix memory_parts); do
	# --pid: the truth at the detach
	rm -f "$T/go"
	"$ALYS_PROGS/$v" $FIBERS $STACK_KIB $LIVE_MIB "$T/go" >"$T/$v.out" 2>&1 &
	prog=$!
	wait_for_line "$T/$v.out" '^READY' 60
	check_status "$v: the program is ready" $?
	"$BIN/alys-bpf" -v --memory-every 0.2 --pid $prog -o "$T/$v-pid.alys" 2>"$T/$v-pid.err" &
	tracer=$!
	wait_for_line "$T/$v-pid.err" 'tracing pid' 60
	check_status "$v: attached" $?
	sleep 1
	rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' /proc/$prog/status)
	kill -INT $tracer
	wait $tracer
	check_eq "$v: the tracer detached cleanly" "$?" 0
	touch "$T/go"
	wait $prog
	read -r s_rss heap live fib nfib malloc anon files in_use free unmapped < <(last_sample "$v-pid")
	check_ge "$v: memory samples written ($s_rss)" "${fib:-0}" 1
	sum=$((heap + fib + malloc + anon + files))
	check_le "$v: the parts ($sum) add up to RSS ($rss, read by the test) within 5%" \
		"$(off_pct "$sum" "$rss")" 500
	check_le "$v: the sample's own RSS ($s_rss) within 5% of the test's" \
		"$(off_pct "$s_rss" "$rss")" 500
	check_le "$v: fiber stacks ($fib) within 10% of $FIBERS x $STACK_KIB KiB" \
		"$(off_pct "$fib" $((FIBERS * STACK_KIB * 1024)))" 1000
	check_le "$v: live heap ($live) within 10% of $LIVE_MIB MiB" \
		"$(off_pct "$live" $((LIVE_MIB << 20)))" 1000
	check_ge "$v: the fibers listed ($nfib): the program's and its main one" "$nfib" $((FIBERS + 1))
	check_le "$v: ... and only a few of the runtime's" "$nfib" $((FIBERS + 8))
	check_le "$v: live ($live) within the heap's resident pages ($heap) and blocks in use ($in_use)" \
		"$(( live > heap + 4096 || live > in_use ))" 0

	# launched: the heap's growths
	rm -f "$T/go"
	"$BIN/alys-bpf" -q --memory-every 0.2 -o "$T/$v.alys" -- \
		"$ALYS_PROGS/$v" $FIBERS $STACK_KIB $LIVE_MIB "$T/go" >"$T/$v.lout" 2>"$T/$v.err" &
	tracer=$!
	wait_for_line "$T/$v.lout" '^READY' 60
	# a sample after the heap is built: one costs tens of ms, and the
	# next waits 20 times that
	sleep 2
	touch "$T/go"
	wait $tracer
	check_eq "$v launched: traced" "$?" 0
	growths "$v" >"$T/$v.grows"
	read -r s_rss heap live fib nfib malloc anon files in_use free unmapped < <(last_sample "$v")
	grown=$(awk '{ s += $1 } END { print s + 0 }' "$T/$v.grows")
	check_ge "$v launched: the heap grew ($(wc -l <"$T/$v.grows") times)" "$(wc -l <"$T/$v.grows")" 2
	check_le "$v launched: the growths' bytes ($grown) are the heap's blocks ($((in_use + free + unmapped))) within 2%" \
		"$(off_pct "$grown" $((in_use + free + unmapped)))" 200
	check_ge "$v launched: 80% of the growth from the buffers' line $BUF_LINE" \
		"$(awk -v l="line$BUF_LINE" '$2 == l { b += $1 } { s += $1 } END { printf "%d", b * 100 / s }' "$T/$v.grows")" 80
done

# The outputs, on the last launched trace of the plain build.
v=memory_parts
report=$("$BIN/alys_converter" -q -f report -o - "$T/$v.alys")
check_match "report: a Memory section" "$report" "^Memory \(where RSS goes\)"
check_match "report: the fibers' stacks at the peak and the last sample" "$report" \
	"fiber stacks +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+%"
check_match "report: the growths by site, the buffers' line first" "$report" \
	"The collector's heap grew [0-9]+ times.*
 +[0-9.]+ +[0-9]+  __crystal_main +memory_parts.cr:$BUF_LINE"
md=$("$BIN/alys_converter" -q -f report --markdown -o - "$T/$v.alys")
check_match "report --markdown: the parts' table" "$md" "^\| fiber stacks \| [0-9.]+ \|"
"$BIN/alys_converter" -q -f timeline -o "$T/$v.svg" "$T/$v.alys"
check_eq "timeline written" "$?" 0
check_eq "timeline: a band for each of RSS's 6 parts" "$(grep -c 'class="mem[0-5]"' "$T/$v.svg")" 6
check_ge "timeline: a tick for each growth" "$(grep -c 'class="grow"' "$T/$v.svg")" \
	"$(wc -l <"$T/$v.grows")"
"$ALYS_PYTHON" -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$T/$v.svg"
check_eq "timeline: well-formed XML" "$?" 0

# /metrics: RSS's parts, Prometheus's units.
rm -f "$T/go"
"$ALYS_PROGS/memory_parts" $FIBERS $STACK_KIB $LIVE_MIB "$T/go" >"$T/http.out" 2>&1 &
prog=$!
on_exit "kill $prog 2>/dev/null"
wait_for_line "$T/http.out" '^READY' 60
"$BIN/alys-bpf" --memory-every 0.2 --http 127.0.0.1:0 --pid $prog -o "$T/http.alys" \
	2>"$T/http.err" &
tracer=$!
on_exit "kill $tracer 2>/dev/null"
wait_for_line "$T/http.err" 'http://127.0.0.1:[0-9]+' 60
port=$(grep -Eo 'http://127.0.0.1:[0-9]+' "$T/http.err" | head -1 | cut -d: -f3)
sleep 1
metrics=$(curl -sf "http://127.0.0.1:$port/metrics")
check_status "/metrics served" $?
fib=$(echo "$metrics" | sed -n 's/^alys_resident_memory_part_bytes{part="fiber_stacks"} //p')
check_le "/metrics: fiber_stacks ($fib) within 10% of the truth" \
	"$(off_pct "${fib:-0}" $((FIBERS * STACK_KIB * 1024)))" 1000
check_eq "/metrics: six parts of RSS" \
	"$(echo "$metrics" | grep -c '^alys_resident_memory_part_bytes{part=')" 6
check_match "/metrics: the heap by state" "$metrics" '^alys_gc_heap_bytes\{state="unmapped"\} [0-9]+$'
check_match "/metrics: growths counted (none since the attach)" "$metrics" \
	'^alys_gc_heap_grown_bytes_total [0-9]+$'
kill -INT $tracer
wait $tracer
check_eq "/metrics: the tracer detached cleanly" "$?" 0
touch "$T/go"
wait $prog

# --memory-every 0: no samples; a bad value names the range.
"$BIN/alys-bpf" -q --memory-every 0 -o "$T/off.alys" -- "$ALYS_PROGS/memory_parts" 2 64 1 /dev/null \
	>/dev/null 2>&1
check_eq "--memory-every 0: traced" "$?" 0
check_eq "--memory-every 0: no memory samples" "$(last_sample off)" none
out=$("$BIN/alys-bpf" --memory-every 0.01 -- true 2>&1)
check_eq "--memory-every 0.01: refused" "$?" 2
check_match "--memory-every 0.01: the message names the range" "$out" "between 0.05 and 3600"
summary
