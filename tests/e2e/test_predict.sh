#!/usr/bin/env bash
# End-to-end: an allocation's block read at its entry (bpf/predict.h), so
# that the call takes one probe, not two (issue 38). On alloc_known (100,000
# small GC_malloc_atomic calls) with Debian 12's libgc, shared and static,
# and the toolchain matrix (the official tarballs' clang large-config libgc linked
# statically, gcc large-config, Debian 13's Crystal 1.14 shared and static):
#   - default full trace: -v says so, and where GC_thread_key is as
#     readelf tells it (static: its symbol's offset less the PT_TLS
#     segment's aligned size; shared: the R_X86_64_DTPMOD64 slot); at least
#     98,000 calls finished at entry (not those that refill a list: one in
#     256 for these 16-byte objects, nor a thread's first of a size, which
#     the collector serves itself), none found wrong, the first ones
#     checked at their return
#   - ALYS_BPF_PREDICT_CHECK_ALL=1: every block read at entry checked
#     against the one returned (at least 98,000), none wrong
# and on Debian 12's shared libgc and the clang build (20,000 calls):
#   - ALYS_BPF_PREDICT_SKEW=16 (each block read taken a granule off, as a
#     wrong layout would give): found wrong at once, reading turned off, the
#     trace still counts every call of the program's size
#   - ALYS_BPF_NO_PREDICT=1: nothing read at entry
# and on the multi-threaded HTTP server (Debian 12's -Dpreview_mt, 4
# workers) under wrk, attached with --pid --sample all, every block read
# checked: at least 10,000, none wrong; and, with --no-liveness, the
# verifier's work (-v): the allocation and GC_stop_world's programs within
# 1.3x of the heap growth's (one walk each).
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T
P=$ALYS_PROGS
N=100000 N_SMALL=20000

# counters FILE.alys: the prediction counters, "predicted checked wrong"
counters() {
	"$BIN/alys_converter" -q -f json --time 0s..1ns -o "$1.json" "$1" || return
	json_query "$1.json" "' '.join(str(counters.get(k, -1)) for k in ('calls_predicted', 'predictions_checked', 'predictions_wrong'))"
}
# key_where PROGRAM: where -v should say GC_thread_key is, from readelf:
# libgc linked in, "at fs-N"; else libgc.so.1's "TLS block +0, module id
# at 0xSLOT" (its one TLS word)
key_where() {
	local off memsz align lib
	off=$(readelf -sW "$1" | awk '$4 == "TLS" && $8 == "GC_thread_key" { print $2; exit }')
	if [ -n "$off" ]; then
		read -r memsz align < <(readelf -lW "$1" | awk '$1 == "TLS" { print $6, $NF }')
		echo "at fs$(( 0x$off - ((memsz + align - 1) / align) * align ))"
		return
	fi
	lib=$(ldd "$1" | awk '$1 == "libgc.so.1" { print $3 }')
	echo "in libgc's TLS block \\+0, module id at 0x$(readelf -rW "$lib" |
		awk '$3 == "R_X86_64_DTPMOD64" { sub(/^0+/, "", $1); print $1 }')"
}
# calls FILE.alys SIZE: GC_malloc_atomic calls of SIZE bytes in the trace
calls() {
	"$BIN/alys_converter" -q -f json -o "$1.all.json" "$1" || return
	json_query "$1.all.json" "sum(1 for e in select(kind='malloc_atomic', size=$2))"
}

for v in alloc_known alloc_known-static $(gc_matrix alloc_known); do
	[ -x "$P/$v" ] || { fail "$v: built" "no $P/$v (tests/build-programs.sh)"; continue; }
	"$BIN/alys-bpf" -v -o "$T/$v.alys" -- "$P/$v" $N >"$T/$v.out" 2>"$T/$v.err"
	size=$(sed -n 's/^SIZE=//p' "$T/$v.out")
	check_match "$v: -v says blocks are read at entry, GC_thread_key where readelf has it" \
		"$(cat "$T/$v.err")" "allocations: small blocks read off the thread's free list at entry \\(GC_thread_key $(key_where "$P/$v")\\)"
	read -r pred checked wrong < <(counters "$T/$v.alys")
	check_ge "$v: calls finished at entry ($pred)" "$pred" 98000
	check_ge "$v: the first ones checked at their return ($checked)" "$checked" 16
	check_eq "$v: none wrong" "$wrong" 0
	check_eq "$v: every call of the program's size traced" "$(calls "$T/$v.alys" "$size")" $N

	ALYS_BPF_PREDICT_CHECK_ALL=1 "$BIN/alys-bpf" -q -o "$T/$v.all.alys" -- "$P/$v" $N >/dev/null 2>&1
	read -r pred checked wrong < <(counters "$T/$v.all.alys")
	check_eq "$v: checking all: none finished at entry" "$pred" 0
	check_ge "$v: checking all: blocks read at entry equal to those returned ($checked)" "$checked" 98000
	check_eq "$v: checking all: none wrong" "$wrong" 0

	# what does not depend on the build: on a shared and a static one
	case $v in alloc_known | alloc_known-clang) ;; *) continue ;; esac
	ALYS_BPF_PREDICT_SKEW=16 "$BIN/alys-bpf" -q -o "$T/$v.skew.alys" -- "$P/$v" $N_SMALL >/dev/null 2>&1
	read -r pred checked wrong < <(counters "$T/$v.skew.alys")
	check_ge "$v: a wrong layout: found wrong" "$wrong" 1
	check_eq "$v: a wrong layout: no call finished at entry" "$pred" 0
	check_eq "$v: a wrong layout: every call still traced" "$(calls "$T/$v.skew.alys" "$size")" $N_SMALL

	ALYS_BPF_NO_PREDICT=1 "$BIN/alys-bpf" -q -o "$T/$v.off.alys" -- "$P/$v" $N_SMALL >/dev/null 2>&1
	check_eq "$v: ALYS_BPF_NO_PREDICT: nothing read at entry" "$(counters "$T/$v.off.alys")" "0 0 0"
done

# Four threads allocating, attached to while running.
v=http_json-mt
if [ -x "$P/$v" ]; then
	command -v wrk >/dev/null || fail "wrk installed" "run scripts/setup-debian.sh"
	PORT=$((20000 + RANDOM % 20000))
	CRYSTAL_WORKERS=4 "$P/$v" $PORT >"$T/srv.out" 2>&1 &
	srv=$!
	on_exit "kill $srv 2>/dev/null"
	wait_for_line "$T/srv.out" '^listening' 30 || fail "$v: server started" "$(cat "$T/srv.out")"
	wrk -t2 -c16 -d60s "http://127.0.0.1:$PORT/" >"$T/wrk.out" 2>&1 &
	wp=$!
	on_exit "kill $wp 2>/dev/null"
	sleep 1
	ALYS_BPF_PREDICT_CHECK_ALL=1 "$BIN/alys-bpf" --sample all --pid $srv -o "$T/mt.alys" 2>"$T/mt.err" &
	tp=$!
	wait_for_line "$T/mt.err" '^alys-bpf: tracing pid' 30 || fail "$v: attached" "$(cat "$T/mt.err")"
	sleep 2
	kill -INT $tp
	wait $tp || fail "$v: exit 0" "$(cat "$T/mt.err")"
	kill $wp 2>/dev/null
	read -r pred checked wrong < <(counters "$T/mt.alys")
	check_ge "$v: 4 workers: blocks read at entry checked ($checked)" "$checked" 10000
	check_eq "$v: 4 workers: none wrong" "$wrong" 0
else
	fail "$v: built" "no $P/$v (tests/build-programs.sh)"
fi

# The allocation program walks once, as GC_expand_hp_inner's does: what it
# tests before the walk and after it (the call's slot, whether its block is
# read at entry) must not have the verifier check the walk once for each
# value (-v's verified instructions; 4x the heap growth's before, 2x for
# GC_stop_world's cookie).
"$BIN/alys-bpf" -v --no-liveness -o "$T/vi.alys" -- "$P/alloc_known" 100 >/dev/null 2>"$T/vi.err"
verified() { sed -n "s/^alys-bpf: BPF instructions verified:.* $1 \([0-9]*\).*/\1/p" "$T/vi.err"; }
grow=$(verified gc_heap_grow) alloc=$(verified gc_alloc_session) stop=$(verified gc_world_stop)
check_ge "verified: the heap growth's program, one walk ($grow instructions)" "${grow:-0}" 10000
check_le "verified: the allocation program within 1.3x of that ($alloc)" \
	"$(( ${alloc:-999999999} * 10 ))" "$(( ${grow:-0} * 13 ))"
check_le "verified: GC_stop_world's within 1.3x of that ($stop)" \
	"$(( ${stop:-999999999} * 10 ))" "$(( ${grow:-0} * 13 ))"
summary
