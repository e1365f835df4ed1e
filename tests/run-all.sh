#!/usr/bin/env bash
# tests/run-all.sh -- everything `make check` runs:
#   1. builds `make` (bin/) and `make SAN=1` (bin-san/, ASan+UBSan)
#   2. runs every tests/unit/test_*.sh against each build, the builds at
#      once (argument: the bin dir, or the path of one program in it if the
#      script has a line "# run-all-arg: PROGRAM", e.g. "# run-all-arg:
#      alys_converter"), or against the one its line "# run-all-builds:
#      NAME" names
#   3. builds the test programs (tests/build-programs.sh tests/build/programs)
#   4. runs every tests/e2e/test_*.sh against each build (argument: bin dir;
#      needs root with BPF and uprobes), or against the one its line
#      "# run-all-builds: NAME" names; two at a time, but for those whose
#      line "# run-all-alone: WHY" says why not (below)
# Each test script prints "N passed, M failed" as its last line (tests/lib.sh
# summary). This script adds them up and prints the grand total as its own
# last line, "N passed, M failed"; it exits 1 if anything failed, if a
# script died without a summary line, or if no end-to-end test ran.
#
# Environment:
#   ALYS_BUILDS        builds to test, default "bin bin-san"
#   ALYS_TEST_FILTER   only run test files whose path matches this ERE
#   ALYS_TEST_TIMEOUT  seconds per test file (default 600)
#   ALYS_SKIP_BUILD=1  do not run make (use the existing bin dirs)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

BUILDS=${ALYS_BUILDS:-bin bin-san}
JOBS=$(nproc 2>/dev/null || echo 2)
FILTER=${ALYS_TEST_FILTER:-}
TIMEOUT=${ALYS_TEST_TIMEOUT:-600}
PROGS=$ROOT/tests/build/programs
export ALYS_ROOT=$ROOT ALYS_PROGS=$PROGS

total_passed=0
total_failed=0
e2e_ran=0
timings=()
t_all=$(date +%s%N)

now_ns() { date +%s%N; }
secs() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1e9 }'; }

# record_failure WHAT MSG: a failure outside any test script.
record_failure() {
	total_failed=$((total_failed + 1))
	echo "FAIL $1: $2"
	timings+=("$(printf '%8s  %-40s %s' "-" "$1" "FAILED: $2")")
}

# test_arg FILE BIN_DIR: the argument FILE gets: BIN_DIR, or BIN_DIR/PROGRAM
# when FILE has a line "# run-all-arg: PROGRAM".
test_arg() {
	local prog
	prog=$(sed -n 's/^# run-all-arg:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$1" | head -n 1)
	if [ -n "$prog" ]; then echo "$2/$prog"; else echo "$2"; fi
}

# run_test FILE BIN_DIR: run one test script, add up its summary line.
run_test() {
	local file=$1 bindir=$2 label out rc line p f t0 t1 tpid left arg
	label="$file [$(basename "$bindir")]"
	arg=$(test_arg "$file" "$bindir")
	echo
	echo "=== $label"
	out=$(mktemp)
	t0=$(now_ns)
	# timeout makes itself a process group leader: $tpid is also the group
	# of everything the test starts. Output goes to a file (not a pipe), so
	# a background process the test leaves behind cannot hold us up.
	ALYS_BIN=$bindir timeout --kill-after=10 "$TIMEOUT" \
		bash "$file" "$arg" </dev/null >"$out" 2>&1 &
	tpid=$!
	tail -s 0.1 -n +1 -f --pid="$tpid" "$out"
	wait "$tpid"
	rc=$?
	t1=$(now_ns)
	left=$(ps -e -o pid=,pgid=,stat=,args= |
		awk -v g="$tpid" '$2 == g && $3 !~ /^Z/ { print "    " $0 }')
	if [ -n "$left" ]; then
		echo "note: $label left processes behind; killing them:"
		echo "$left"
		kill -TERM -- -"$tpid" 2>/dev/null
		sleep 1
		kill -KILL -- -"$tpid" 2>/dev/null
	fi
	line=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1)
	rm -f "$out"
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		p=${BASH_REMATCH[1]}
		f=${BASH_REMATCH[2]}
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL $label: exited with status $rc but reported no failure"
			f=1
		fi
	else
		p=0
		f=1
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "FAIL $label: timed out after ${TIMEOUT}s"
		else
			echo "FAIL $label: exited with status $rc without a summary line"
		fi
	fi
	echo "--- $label: $p passed, $f failed ($(secs $((t1 - t0))) s)"
	add_result "$p" "$f" "$(printf '%7ss  %-40s %s' "$(secs $((t1 - t0)))" "$label" "$p passed, $f failed")"
}

# add_result PASSED FAILED TIMING-LINE: into the totals, or, in a run_test
# made in the background (RESULT_FILE set), into that file for the parent.
add_result() {
	if [ -n "${RESULT_FILE:-}" ]; then
		printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULT_FILE"
		return
	fi
	total_passed=$((total_passed + $1))
	total_failed=$((total_failed + $2))
	timings+=("$3")
}

# test_files DIR: the test_*.sh files of DIR, filtered by ALYS_TEST_FILTER.
test_files() {
	local f
	for f in "$1"/test_*.sh; do
		[ -f "$f" ] || continue
		if [ -n "$FILTER" ] && ! [[ $f =~ $FILTER ]]; then
			continue
		fi
		echo "${f#"$ROOT"/}"
	done
}

# --- 1. builds ---------------------------------------------------------------
good_builds=()
for b in $BUILDS; do
	case $b in
	bin) mk=(make -j"$JOBS") ;;
	bin-san) mk=(make -j"$JOBS" SAN=1) ;;
	*) record_failure "build $b" "unknown build (expected bin or bin-san)"; continue ;;
	esac
	if [ "${ALYS_SKIP_BUILD:-0}" != 1 ]; then
		echo "=== ${mk[*]}"
		t0=$(now_ns)
		if ! "${mk[@]}" </dev/null; then
			record_failure "${mk[*]}" "build failed; its tests are not run"
			continue
		fi
		timings+=("$(printf '%7ss  %-40s %s' "$(secs $(($(now_ns) - t0)))" "${mk[*]}" "ok")")
	fi
	if [ ! -x "$ROOT/$b/alys-bpf" ] || [ ! -x "$ROOT/$b/alys_converter" ]; then
		record_failure "build $b" "$b/alys-bpf or $b/alys_converter missing"
		continue
	fi
	good_builds+=("$ROOT/$b")
done

# A test with a line "# run-all-builds: NAME" runs against that build only
# (its header says why), e.g. a timing test whose subject is not memory
# safety: the sanitizers' build only makes it slower.
only_build() { sed -n 's/^# run-all-builds:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$1" | head -n 1; }

# --- 2. unit tests -----------------------------------------------------------
unit_files=$(test_files tests/unit)
if [ -z "$unit_files" ]; then
	echo "note: no tests/unit/test_*.sh found"
fi
# Each file against every build at once: unit tests use no BPF and no
# shared state (each build has its own work directory), and one converter
# process at a time leaves the other CPU idle. Their outputs follow in order.
for f in $unit_files; do
	outs=()
	only=$(only_build "$f")
	for b in "${good_builds[@]}"; do
		[ -z "$only" ] || [ "$only" = "$(basename "$b")" ] || continue
		o=$(mktemp)
		outs+=("$o")
		RESULT_FILE=$o.result run_test "$f" "$b" >"$o" &
	done
	wait
	for o in "${outs[@]}"; do
		cat "$o"
		if [ -s "$o.result" ]; then
			IFS=$'\t' read -r n_pass n_fail line <"$o.result"
			add_result "$n_pass" "$n_fail" "$line"
		else
			record_failure "$f" "its run left no result"
		fi
		rm -f "$o" "$o.result"
	done
done

# --- 3. test programs ------------------------------------------------------
e2e_files=$(test_files tests/e2e)
if [ -n "$e2e_files" ]; then
	echo
	echo "=== tests/build-programs.sh $PROGS"
	t0=$(now_ns)
	if tests/build-programs.sh "$PROGS" </dev/null; then
		timings+=("$(printf '%7ss  %-40s %s' "$(secs $(($(now_ns) - t0)))" "build-programs" "ok")")
	else
		record_failure "build-programs" "test programs failed to build"
	fi
fi

# --- 4. end-to-end tests ---------------------------------------------------
# A test with a line "# run-all-alone: WHY" runs with no other test beside
# it (e.g. the --all agent's, which would trace the other tests' programs);
# they come first, one at a time. The others, every build's, run two at a
# time: most of a test's time is its programs' waiting (servers, sleeps,
# collections), and two builds' suites one after the other left a CPU idle
# more than a third of the time. A test with a line "# run-all-early: WHY"
# (the longest) starts before the rest, so that the two workers end
# together. Tests must hold on a busy machine anyway (tests/lib.sh
# cpu_load). Each test's output is printed whole when it ends.
alone_jobs=() early_jobs=() pool_jobs=()
for b in "${good_builds[@]}"; do
	for f in $e2e_files; do
		only=$(only_build "$f")
		if [ -n "$only" ] && [ "$only" != "$(basename "$b")" ]; then
			echo
			echo "=== $f [$(basename "$b")]: not run, this test runs against $only only (its header says why)"
			continue
		fi
		if grep -q '^# run-all-alone:' "$f"; then
			alone_jobs+=("$f $b")
		elif grep -q '^# run-all-early:' "$f"; then
			early_jobs+=("$f $b")
		else
			pool_jobs+=("$f $b")
		fi
	done
done
for j in "${alone_jobs[@]}"; do
	run_test ${j% *} ${j#* }
	e2e_ran=$((e2e_ran + 1))
done
pool_jobs=("${early_jobs[@]}" "${pool_jobs[@]}")
if [ "${#pool_jobs[@]}" -gt 0 ]; then
	Q=$(mktemp -d)
	# worker: claims jobs in order (mkdir is atomic), runs each into a file,
	# prints it whole under a lock
	worker() {
		local i j
		for i in "${!pool_jobs[@]}"; do
			mkdir "$Q/claim.$i" 2>/dev/null || continue
			j=${pool_jobs[$i]}
			RESULT_FILE=$Q/out.$i.result run_test "${j% *}" "${j#* }" >"$Q/out.$i"
			flock "$Q/lock" cat "$Q/out.$i"
		done
	}
	worker &
	w1=$!
	worker &
	w2=$!
	wait "$w1" "$w2"
	for i in "${!pool_jobs[@]}"; do
		if [ -s "$Q/out.$i.result" ]; then
			IFS=$'\t' read -r n_pass n_fail line <"$Q/out.$i.result"
			add_result "$n_pass" "$n_fail" "$line"
		else
			record_failure "${pool_jobs[$i]% *}" "its run left no result"
		fi
		e2e_ran=$((e2e_ran + 1))
	done
	rm -rf "$Q"
fi
if [ "$e2e_ran" -eq 0 ]; then
	record_failure "e2e" "no end-to-end test ran (tests/e2e/test_*.sh${FILTER:+ matching /$FILTER/}, builds: ${#good_builds[@]})"
fi

# --- summary -----------------------------------------------------------------
echo
echo "=== timings"
for t in "${timings[@]}"; do echo "$t"; done
echo "total $(secs $(($(now_ns) - t_all))) s"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$e2e_ran" -gt 0 ]
