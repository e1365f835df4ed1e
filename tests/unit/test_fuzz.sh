#!/usr/bin/env bash
# Fuzz smoke test of the converter's trace reader (the full run is `make
# fuzz`): every committed seed of tests/fuzz/corpus once, then a few seconds
# of libFuzzer mutations (ALYS_FUZZ_SMOKE_SECONDS, default 8). The harness is
# always built with ASan+UBSan, whichever bin dir is given: it runs once.
# run-all-builds: bin-san
. "$(dirname "$0")/../lib.sh"
RUN=$ALYS_ROOT/tests/fuzz/run.sh

out=$("$RUN" --build 2>&1)
rc=$?
check_eq "fuzz harness builds (clang -fsanitize=fuzzer,address,undefined)" "$rc" 0
[ "$rc" -eq 0 ] || printf '%s\n' "$out"
check_ge "corpus has real traces and edge cases" \
	"$(ls "$ALYS_ROOT"/tests/fuzz/corpus/real-*.alys "$ALYS_ROOT"/tests/fuzz/corpus/edge-*.alys | wc -l)" 20
out=$("$RUN" --corpus 2>&1)
rc=$?
check_eq "every corpus seed: no crash, leak, timeout or sanitizer report" "$rc" 0
[ "$rc" -eq 0 ] || printf '%s\n' "$out"
check_match "every corpus seed ran" "$out" "INFO: +[0-9]+ files found in tests/fuzz/corpus"
out=$("$RUN" "${ALYS_FUZZ_SMOKE_SECONDS:-8}" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E 'executed_units|peak_rss'
check_eq "${ALYS_FUZZ_SMOKE_SECONDS:-8} s of mutations: nothing found" "$rc" 0
# the finding: sanitizer report and the input's path
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -40
# (a finding prints the stats twice: the last count is the run's)
check_ge "mutations actually ran" \
	"$(printf '%s\n' "$out" | sed -n 's/^stat::number_of_executed_units: *//p' | tail -n 1)" 1000
summary
