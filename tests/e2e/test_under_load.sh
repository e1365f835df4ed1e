#!/usr/bin/env bash
# End-to-end under CPU load (issue 23): the liveness and refill tests again
# with both CPUs kept busy by the tests' own busy loops (tests/lib.sh
# cpu_load). A production host is never idle: liveness must lose no death
# because the target or the daemon ran late, and the sampling estimates
# must hold. Its subject is timing, not memory safety: the sanitizers' build
# runs the same tests unloaded (and only it: the plain build runs them here,
# loaded, the harder case), and loaded would only add minutes to CI.
# run-all-builds: bin
# run-all-early: the longest with test_threads (~4 min)
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf

passed=0
failed=0
for t in test_liveness test_refill; do
	out=$(ALYS_LOAD=2 bash "$ALYS_ROOT/tests/e2e/$t.sh" "$BIN" 2>&1)
	echo "--- $t.sh, both CPUs busy"
	echo "$out" | sed '$d'
	line=$(echo "$out" | tail -n 1)
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		echo "FAIL $t under load: no summary line (died?)"
		failed=$((failed + 1))
	fi
done
_ALYS_PASSED=$passed
_ALYS_FAILED=$failed
summary
