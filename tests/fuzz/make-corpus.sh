#!/usr/bin/env bash
# Regenerate the fuzzer's seed corpus, tests/fuzz/corpus/ (committed; run
# this only to refresh it, as root, after `make` and tests/build-programs.sh):
#   real-*.alys   traces written by bin/alys-bpf of tests/programs (launch,
#                 static libgc, --pid attach, fp unwinding, a killed tracer)
#   v1-*.alys     real traces of format version 1, kept as they are (not remade)
#   edge-*.alys   hand-made edge cases written with tests/unit/test_converter_gen.c
# Every file stays well under 50 KB.
#
#   tests/fuzz/make-corpus.sh [BIN_DIR]     (default bin)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$(cd "${1:-$ROOT/bin}" && pwd)
P=$ROOT/tests/build/programs
OUT=$ROOT/tests/fuzz/corpus
W=$ROOT/tests/build/fuzz/make-corpus
rm -rf "$W"
mkdir -p "$W" "$OUT"
rm -f "$OUT"/real-*.alys "$OUT"/edge-*.alys

# ---- real traces -------------------------------------------------------------
T=$BIN/alys-bpf
"$T" -q -o "$OUT/real-alloc_known.alys" -- "$P/alloc_known" 10 >/dev/null || true
"$T" -q -o "$OUT/real-alloc_known-static.alys" -- "$P/alloc_known-static" 10 >/dev/null || true
"$T" -q -o "$OUT/real-exit_sigterm.alys" -- "$P/exit_status" sigterm >/dev/null || true
"$T" -q --unwind fp -o "$OUT/real-callchain-fp.alys" -- "$P/callchain" 5 >/dev/null
"$T" -q --max-frames 4 -o "$OUT/real-callchain-release.alys" -- "$P/callchain-release" 5 >/dev/null
"$T" -q -o "$OUT/real-callchain-c.alys" -- "$P/callchain-c" 5 >/dev/null
# anonymous and memfd mappings; a stack cut at the frame limit
"$T" -q -o "$OUT/real-jit_alloc.alys" -- "$P/jit_alloc" 5 3 >/dev/null
# GC pauses (record 13), with and without the collection around them
"$T" -q --no-liveness --sample bytes:64K -o "$OUT/real-gc_pauses.alys" -- "$P/gc_pauses" explicit 3 2000 >/dev/null
# memory samples and heap growths (records 14 and 15), --sample keeps it small
(for _ in $(seq 100); do grep -q READY "$W/mp.out" 2>/dev/null && break; sleep 0.1; done
 sleep 0.3; touch "$W/go") &
"$T" -q --sample bytes:1M --memory-every 0.05 -o "$OUT/real-memory_parts.alys" -- "$P/memory_parts" 4 64 1 "$W/go" >"$W/mp.out"
"$T" -q --max-frames 16 -o "$OUT/real-deep-truncated.alys" -- "$P/many_stacks" deep 40 3 >/dev/null
# stacks as a prefix tree of nodes (format version 2), a path sharing most frames
"$T" -q -o "$OUT/real-deep_stacks.alys" -- "$P/deep_stacks-release" 16 30 1 >/dev/null
# attached, then detached with SIGINT: end reason "signal"
"$P/sleeper" 0 "$W/hb" 2 >"$W/sleeper.out" &
spid=$!
for _ in $(seq 100); do grep -q READY "$W/sleeper.out" && break; sleep 0.1; done
# wait_trace FILE: until the tracer has written its header and some records
wait_trace() {
	for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done
	sleep 1
}
"$T" -q -o "$OUT/real-sleeper-attach.alys" --pid "$spid" &
tpid=$!
wait_trace "$OUT/real-sleeper-attach.alys"
kill -INT "$tpid"; wait "$tpid" || true
# the tracer killed: no end record, the file may end inside a record
"$T" -q -o "$W/killed.alys" --pid "$spid" &
tpid=$!
wait_trace "$W/killed.alys"
kill -KILL "$tpid"; wait "$tpid" 2>/dev/null || true
kill "$spid"; wait "$spid" 2>/dev/null || true
head -c 12000 "$W/killed.alys" >"$OUT/real-sleeper-killed.alys"

# ---- hand-made edge cases ----------------------------------------------------
make -s -C "$ROOT" build/tests/test_converter_gen
cp "$ROOT/build/tests/test_converter_gen" "$W/gen"
gen() { "$W/gen" >"$OUT/edge-$1.alys"; }
H="header alys-bpf 1 4242 /bin/prog 1000"
printf '%s\nend exit 0 2000 0\n' "$H" | gen minimal
# the optional flags fields: valid, and of the wrong type
printf '%s\nmappingf 1 0x1000 0x2000 0 //anon -\nstackf 1 1 0x1800 0x1900\nevent 1 1 1 8 0x10 0 0 1 8 0\nend exit 0 2 1\n' "$H" | gen flags
printf '%s\nstackf str 1 0x1800\nend exit 0 2 0\n' "$H" | gen flags-bad
printf '%s\n' "$H" | gen header-only
printf 'header alys-bpf 2 1 /x 0\nend exit 0 0 0\n' | gen version2
printf 'header alys-bpf 0 1 /x 0\nend exit 0 0 0\n' | gen version0
printf 'header alys-bpd 1 1 /x 0\nend exit 0 0 0\n' | gen badmagic
gen records <<R
$H
mapping 0x555555554000 0x555555560000 0x1000 /bin/prog 0123456789abcdef0123
mapping 0x7f0000000000 0x7f0000010000 0 /lib/libgc.so.1 -
mapping 0x555555554000 0x555555558000 0 /bin/prog-later -
counters ringbuf_drop_event=0 stack_map_full=1
stack 1 0x7f0000001000 0x555555555000 0x555555556000
stack 2 0x7f0000002000
stack 3
event 1 1001 100 16 0x10000 0 0 1 16 1
event 2 1002 100 8 0x20000 0 0 2 8 1
event 3 1003 101 32 0x30000 0x10000 0 1 32 2
event 3 1004 101 0 0 0x30000 0 1 0 2
event 3 1005 101 64 0 0x20000 0 1 64 2
event 4 1006 102 0 0x20000 0 0 3 0 0x100000000
event 4 1007 102 0 0x99999 0 0 0 0 0
event 1 1008 103 8 0x10000 0 0 77 8 3
future
stack 1 0x7f0000003000
event 2 1009 0xffffff 8 0x40000 0 0 1 8 3
counters ringbuf_drop_event=3 ringbuf_drop_stack=1 later_counter=9
end exit -1 3000 11
raw c0c3a1ff
R
# version 2: stack nodes and events in compressed blocks, one cut short
gen blocks <<R
header alys-bpf 2 4242 /bin/true 1000
block
nodes 1 0 0 0x401000 0x401100 0x401200
event 1 1100 7 32 0x10000 0 0 3 32 1
collection 1200 1 1 1 1 0 50 2 0
endblock
block
nodes 4 2 0 0x401300
event 2 1300 7 64 0x20000 0 0 4 64 1
endblock
end exit 0 2000 2
R
gen nested <<R
$H
raw 93639191910191a0
raw 92cc63dc000a00010203040506070809
raw 93cc64de0002a161c0a162c3c7020001ff
raw 9305820000
end signal 130 0 0
R
gen deep <<R
$H
raw 91919191919191919191919191919191919101
R
gen c1 <<R
$H
raw c1
R
gen huge-array <<R
$H
raw ddffffffff01
R
gen huge-str <<R
$H
raw 9302ceffffffffdbffffffff
R
gen bad-tid <<R
$H
event 1 1 0x1000000 8 0x100 0 0 0 8 0
end exit 0 0 1
R
gen bad-kind <<R
$H
event 0 1 1 8 0x100 0 0 0 8 0
R
gen empty-mapping <<R
$H
mapping 0x2000 0x1000 0 /x -
R
gen stack-id0 <<R
$H
stack 0 0x1
R
gen ext-floats <<R
$H
raw 9b06ca3f800000cb3ff0000000000000d4010fd5020102d6030001020304d7040001020304050607d80500010203040506070809101112131415c0c3c2
raw 9203d3fffffffffffffffe
end exit 0 0 0
R
# a heap snapshot: a block of 32-byte slots pointing at each other, an
# atomic block, a root (tests/unit/test_converter.sh has the same graph)
gen heap-snapshot <<R
$H
heapblock 0x10000 32 1 7 0x10020 0x10040 0 7 0x10060 0 0 7 0x10068 0 0 7 0 0 0 7 0x10000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
heapblock 0x20000 256 0 0x10080
root 1 x:646174612070726f67 0x5000 0x10000 0x99999
snapshot 100 2000000 2 512 1 1 256
end snapshot 0 200 0
R
# header variants: a map with no magic, not a map, keys of the wrong type
printf '\x81\xa5magic\xa8alys-bpf' >"$OUT/edge-no-version.alys"
printf '\x82\xa5magic\xa8alys-bpf\xa7version\xa11' >"$OUT/edge-version-str.alys"
printf '\x93\x01\x02\x03' >"$OUT/edge-not-a-map.alys"
printf '\x83\xa5magic\xa8alys-bpf\xa7version\x01\x05\x06\x92\x05\x80' >"$OUT/edge-int-key.alys"
printf '\x84\xa5magic\xa8alys-bpf\xa7version\x01\xa4argv\x92\xa1a\x01\xa4argv\x90\x92\x05\x80' >"$OUT/edge-argv-bad.alys"
printf '\x84\xa5magic\xa8alys-bpf\xa7version\x01\xa4argv\x91\xa1a\xa4argv\x92\xa1b\xa1c\x92\x05\x81\xa6reason\x01' >"$OUT/edge-argv-twice.alys"
ls -l "$OUT"
