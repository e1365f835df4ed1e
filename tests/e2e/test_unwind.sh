#!/usr/bin/env bash
# End-to-end: stacks without frame pointers, unwound in BPF from .eh_frame
# (issue 3). A known call chain main -> chain_a -> chain_b -> chain_c ->
# allocation, in a debug and a --release Crystal build and a C program built
# with -O2 -fomit-frame-pointer; an independent unwinder (gdb) agrees.
# Its subject is the BPF unwinder, the same in both builds: the tables the
# daemon builds for it are checked under the sanitizers by
# tests/unit/test_unwind_table.sh.
# run-all-builds: bin
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T
N=20000

# unwound NAME PROG SIZE: trace PROG with default settings; >= 99% of the
# SIZE-byte allocations from chain_c have chain_c, chain_b, chain_a in order.
unwound() {
	local name=$1 prog=$2 size=$3 all good
	"$BIN/alys-bpf" -q -o "$T/$name.alys" -- "$prog" $N >"$T/$name.out"
	check_eq "$name: traced" "$?" 0
	check_eq "$name: program allocates SIZE=$size" "$(sed -n 's/^SIZE=//p' "$T/$name.out")" "$size"
	"$BIN/alys_converter" -f json -o "$T/$name.json" "$T/$name.alys"
	all=$(json_query "$T/$name.json" "count(kind='malloc_atomic', size=$size)")
	good=$(json_query "$T/$name.json" "count(kind='malloc_atomic', size=$size, frames=['chain_c', 'chain_b', 'chain_a', 'main'])")
	check_eq "$name: all $N allocations recorded" "$all" $N
	check_ge "$name: >= 99% of them unwound through chain_c, chain_b, chain_a, main ($good of $all)" \
		$((good * 100)) $((all * 99))
	check_eq "$name: the allocating frame is right above the GC function" \
		"$(json_query "$T/$name.json" "sum(1 for e in select(kind='malloc_atomic', size=$size) if 'chain_c' in ''.join(names(e)[1:6]))")" "$all"
	check_match "$name: stacks reach the program's entry (_start)" \
		"$(json_query "$T/$name.json" "count(kind='malloc_atomic', size=$size, frame='_start')")" "^$all\$"
}

unwound crystal-debug "$ALYS_PROGS/callchain" 40
unwound crystal-release "$ALYS_PROGS/callchain-release" 40
check_eq "release build: Leaf.new inlined, shown as an inlined frame only" \
	"$(json_query "$T/crystal-release.json" "sum(1 for e in select(kind='malloc_atomic', size=40) if any('Leaf.new' in f['name'] for f in e['stack']) and all(f.get('inlined') for f in e['stack'] if 'Leaf.new' in f['name']))")" $N
check_eq "C program has no frame pointers" \
	"$(objdump -d --no-show-raw-insn "$ALYS_PROGS/callchain-c" | awk '/<chain_b>:/{f=1} f&&/push +%rbp/{print "fp"; exit} f&&/ret/{exit}')" ""
unwound c-omit-frame-pointer "$ALYS_PROGS/callchain-c" 24

# --- an independent unwinder: gdb's backtrace at the same call ------------
compare_gdb() {
	local name=$1 prog=$2 size=$3 ours theirs
	theirs=$(ALYS_GDB_SIZE=$size gdb -nx -batch -x "$ALYS_ROOT/tests/e2e/gdb_frames.py" \
		--args "$prog" 10 2>/dev/null | sed -n 's/^FRAME //p')
	# gdb's NORMAL_FRAMEs are the physical frames: leave out inlined ones
	ours=$(json_query "$T/$name.json" "'\n'.join(f.get('symbol', f['name']) for f in select(kind='malloc_atomic', size=$size)[0]['stack'] if not f.get('inlined'))")
	check_match "$name: gdb produced a backtrace" "$(printf '%s\n' "$theirs" | wc -l)" '^([5-9]|[1-9][0-9])$'
	if [ "$ours" == "$theirs" ]; then
		ok "$name: frames equal gdb's backtrace ($(printf '%s\n' "$ours" | wc -l) frames)"
	else
		fail "$name: frames equal gdb's backtrace" "$(diff <(echo "$ours") <(echo "$theirs") | head -20)"
	fi
}
compare_gdb crystal-debug "$ALYS_PROGS/callchain" 40
compare_gdb crystal-release "$ALYS_PROGS/callchain-release" 40
compare_gdb c-omit-frame-pointer "$ALYS_PROGS/callchain-c" 24

# --- --unwind=fp on a program built with frame pointers --------------------
gcc -O2 -fno-omit-frame-pointer -fno-inline -o "$T/callchain-fp" "$ALYS_ROOT/tests/programs/callchain.c" -lgc
"$BIN/alys-bpf" -q --unwind fp -o "$T/fp.alys" -- "$T/callchain-fp" 1000 >/dev/null
"$BIN/alys_converter" -f json -o "$T/fp.json" "$T/fp.alys"
check_eq "--unwind=fp: header says fp" "$(json_query "$T/fp.json" "header['unwind']")" fp
check_eq "--unwind=fp: frame-pointer build unwinds through chain_c, chain_b, chain_a" \
	"$(json_query "$T/fp.json" "count(kind='malloc_atomic', size=24, frames=['chain_c', 'chain_b', 'chain_a', 'main'])")" 1000
"$BIN/alys-bpf" -q --unwind fp -o "$T/fp-crystal.alys" -- "$ALYS_PROGS/callchain" 100 >/dev/null
"$BIN/alys_converter" -f json -o "$T/fp-crystal.json" "$T/fp-crystal.alys"
check_eq "--unwind=fp on Crystal (no frame pointers) cannot reach chain_a: why dwarf is the default" \
	"$(json_query "$T/fp-crystal.json" "count(kind='malloc_atomic', size=40, frames=['chain_c', 'chain_b', 'chain_a'])")" 0

# --- the frame cap ---------------------------------------------------------
"$BIN/alys-bpf" -q --max-frames 4 -o "$T/cap.alys" -- "$ALYS_PROGS/callchain" 100 >/dev/null
"$BIN/alys_converter" -f json -o "$T/cap.json" "$T/cap.alys"
check_eq "--max-frames 4: no stack deeper than 4" \
	"$(json_query "$T/cap.json" "max(len(e['stack']) for e in events)")" 4
check_ge "--max-frames 4: truncation counted" \
	"$(json_query "$T/cap.json" "counters['stack_truncated']")" 100
out=$("$BIN/alys-bpf" --max-frames 129 -- true 2>&1)
check_match "--max-frames above the cap is refused, naming the cap" "$out" '1\.\.128'

# --- a library loaded with dlopen gets its rows while the target runs ------
F=$ALYS_ROOT/tests/e2e/fixtures
gcc -O2 -fomit-frame-pointer -shared -fPIC -o "$T/libdlalloc.so" "$F/dlopen_lib.c" -lgc
gcc -O2 -fomit-frame-pointer -o "$T/dlopen_main" "$F/dlopen_main.c" -lgc -ldl
"$BIN/alys-bpf" -q -o "$T/dlopen.alys" -- "$T/dlopen_main" "$T/libdlalloc.so" 1000 >/dev/null
"$BIN/alys_converter" -f json -o "$T/dlopen.json" "$T/dlopen.alys"
check_eq "dlopen: stacks go through the library into main" \
	"$(json_query "$T/dlopen.json" "count(kind='malloc_atomic', size=56, frames=['lib_leaf', 'lib_entry', 'main', '_start'])")" 1000
check_eq "dlopen: the library's mapping is in the trace" \
	"$(json_query "$T/dlopen.json" "sum(1 for m in d['mappings'] if m['path'].endswith('libdlalloc.so'))")" 1

# --- fibers run on their own stacks ----------------------------------------
cat >"$T/fibers.cr" <<'CR'
class Leaf
  @v = 0_i64
  @w = 1_i64
  @t = 2_i64
  @u = 3_i64
end

@[NoInline]
def in_fiber(n)
  n.times { Leaf.new }
end

done = Channel(Nil).new
4.times { spawn { in_fiber(1000); done.send(nil) } }
4.times { done.receive }
CR
crystal build -o "$T/fibers" "$T/fibers.cr" 2>&1
"$BIN/alys-bpf" -q -o "$T/fibers.alys" -- "$T/fibers" >/dev/null
"$BIN/alys_converter" -f json -o "$T/fibers.json" "$T/fibers.alys"
check_eq "fibers: all 4000 allocations made on fiber stacks unwound through in_fiber" \
	"$(json_query "$T/fibers.json" "count(kind='malloc_atomic', size=40, frame='in_fiber')")" 4000
check_eq "fibers: and on to the fiber's entry proc" \
	"$(json_query "$T/fibers.json" "sum(1 for e in select(kind='malloc_atomic', size=40) if any('Fiber' in n or '~proc' in n for n in names(e)))")" 4000

summary
