#!/usr/bin/env bash
# Build and run the libFuzzer harness of the converter's trace reader
# and of the analyses every format renders (tests/fuzz/fuzz_trace.c over
# profile/trace.c, profile/mp_scan.c, profile/model.c and, for heap
# snapshots, converter/heap.c).
#
#   tests/fuzz/run.sh [SECONDS]     fuzz for SECONDS (default $FUZZ_SECONDS,
#                                   else 60); `make fuzz` runs this
#   tests/fuzz/run.sh --corpus      run every seed of tests/fuzz/corpus once
#   tests/fuzz/run.sh --build       only build tests/build/fuzz/fuzz_trace
#
# Exit status 0 when nothing was found; 1 on any finding: a crash, a
# sanitizer report (ASan, UBSan, leaks), an input running longer than
# 10 s, more than 1024 MB of RSS or a single allocation above 256 MB, or
# the reader calling exit(). The input that caused it is saved in
# tests/build/fuzz/findings/ (reproduce: tests/build/fuzz/fuzz_trace FILE),
# and added to the regression corpus with: cp FILE tests/fuzz/corpus/.
#
# Inputs the fuzzer finds interesting accumulate in tests/build/fuzz/corpus
# (not committed); tests/fuzz/corpus holds the committed seeds (see
# tests/fuzz/make-corpus.sh).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
W=tests/build/fuzz
FUZZER=$W/fuzz_trace
CLANG=${CLANG:-clang}
# lib/ and profile/: all of them, as the Makefile links them
SRCS="converter/heap.c $(echo profile/*.c lib/*.c)"
HDRS="converter/*.h profile/*.h lib/*.h include/alys_format.h"

build() {
	local stale=0 f
	mkdir -p "$W/obj"
	[ -x "$FUZZER" ] || stale=1
	for f in tests/fuzz/fuzz_trace.c tests/fuzz/run.sh $SRCS $HDRS; do
		[ "$f" -nt "$FUZZER" ] && stale=1
	done
	[ $stale -eq 1 ] || return 0
	echo "fuzz: building $FUZZER"
	local flags=(-g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -I.
		-fno-omit-frame-pointer -fno-sanitize-recover=all -Wall -Wextra)
	local objs=() s o
	# The reader is instrumented for coverage; main.c is not linked:
	# libFuzzer brings its own main.
	for s in $SRCS; do
		o=$W/obj/$(basename "$s" .c).o
		"$CLANG" "${flags[@]}" -fsanitize=fuzzer-no-link,address,undefined \
			-c "$s" -o "$o" || return 1
		objs+=("$o")
	done
	"$CLANG" "${flags[@]}" -fsanitize=fuzzer,address,undefined \
		tests/fuzz/fuzz_trace.c "${objs[@]}" -o "$FUZZER.tmp" -lmsgpackc -lzstd -lz -ldw -lelf -lcapstone -lpthread &&
		mv "$FUZZER.tmp" "$FUZZER"
}

if ! build; then
	echo "fuzz: FAIL: cannot build the harness (needs clang and libclang-rt-14-dev)"
	exit 1
fi
[ "${1:-}" = --build ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mkdir -p "$W/corpus" "$W/findings"
# -close_fd_mask=2: the reader's one-line error per bad input would flood
# the log; sanitizer reports still go to the real stderr.
LIMITS=(-rss_limit_mb=1024 -malloc_limit_mb=256 -timeout=10 -max_len=65536
	-close_fd_mask=2 -dict=tests/fuzz/alys.dict
	-artifact_prefix="$W/findings/")

if [ "${1:-}" = --corpus ]; then
	echo "fuzz: running the $(ls tests/fuzz/corpus | wc -l) seeds of tests/fuzz/corpus once"
	"$FUZZER" "${LIMITS[@]}" -runs=0 tests/fuzz/corpus 2>&1 | tail -n 5
	rc=${PIPESTATUS[0]}
else
	secs=${1:-${FUZZ_SECONDS:-60}}
	echo "fuzz: fuzzing the trace reader for $secs s"
	"$FUZZER" "${LIMITS[@]}" -max_total_time="$secs" -print_final_stats=1 \
		"$W/corpus" tests/fuzz/corpus >"$W/last.log" 2>&1
	rc=$?
	grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|INFO: seed corpus)' "$W/last.log"
fi
if [ "$rc" -ne 0 ]; then
	[ -f "$W/last.log" ] && [ "${1:-}" != --corpus ] && grep -A40 -E '^==[0-9]+==|runtime error|ERROR: libFuzzer|SUMMARY' "$W/last.log" | head -80
	echo "fuzz: FAIL: libFuzzer exited with status $rc; input(s) in $W/findings/:"
	ls -1 "$W/findings/" | sed 's/^/  /'
	exit 1
fi
echo "fuzz: ok, no finding"
