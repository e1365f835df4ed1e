#!/usr/bin/env bash
# End-to-end: launch and attach on real Crystal programs (issue 2).
#   shared and static libgc, exit status, sudo user, --pid attach/detach,
#   errors that name cause and fix.
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T
N=100000

# --- launch, shared libgc (Debian's libgc.so.1) and static libgc.a --------
for variant in alloc_known alloc_known-static $(gc_matrix alloc_known); do
	prog=$ALYS_PROGS/$variant
	"$BIN/alys-bpf" -q -o "$T/$variant.alys" -- "$prog" $N >"$T/$variant.out" 2>"$T/$variant.err"
	check_eq "$variant: exit status of the app passed through" "$?" 3
	size=$(sed -n 's/^SIZE=//p' "$T/$variant.out")
	check_eq "$variant: app ran to completion" "$(sed -n 's/^COUNT=//p' "$T/$variant.out")" $N
	"$BIN/alys_converter" -f json -o "$T/$variant.json" "$T/$variant.alys"
	check_eq "$variant: json conversion" "$?" 0
	"$BIN/alys_converter" -f folded-stacks -o "$T/$variant.folded" "$T/$variant.alys"
	check_eq "$variant: folded conversion" "$?" 0
	# Point has one Int32 field: GC_malloc_atomic, SIZE bytes, N times,
	# each from make_points.
	check_eq "$variant: $N malloc_atomic events of $size bytes from make_points" \
		"$(json_query "$T/$variant.json" "count(kind='malloc_atomic', size=$size, frame='make_points')")" $N
	check_eq "$variant: no other events of that size" \
		"$(json_query "$T/$variant.json" "count(kind='malloc_atomic', size=$size)")" $N
	check_eq "$variant: trace is complete (end record, reason exit, status 3)" \
		"$(json_query "$T/$variant.json" "(end or {}).get('reason'), (end or {}).get('exit_status')")" \
		'["exit", 3]'
	check_eq "$variant: nothing lost" \
		"$(json_query "$T/$variant.json" "counters.get('ringbuf_drop_event', -1) + counters.get('ringbuf_drop_stack', -1) + counters.get('unmapped_ip', -1)")" 0
	check_match "$variant: folded stacks name the allocating method" \
		"$(grep -c 'make_points' "$T/$variant.folded")" '^[1-9]'
	folded_total=$(awk '{ s += $NF } END { print s }' "$T/$variant.folded")
	check_eq "$variant: folded total (bytes) = allocated bytes in json" "$folded_total" \
		"$(json_query "$T/$variant.json" "sum(e['weight'] for e in events if e['kind'] != 'free')")"
	check_match "$variant: mappings carry build ids" \
		"$(json_query "$T/$variant.json" "sum(1 for m in d['mappings'] if m.get('build_id'))")" '^[1-9]'
done
check_match "static variant has libgc inside the executable" \
	"$(nm "$ALYS_PROGS/alloc_known-static" | grep -c ' T GC_malloc$')" '^1$'

# --- probes sit on instructions the kernel emulates, arguments intact -------
# (the allocation entry points as uprobe sessions: their blocks read at
# entry, test_predict)
out=$("$BIN/alys-bpf" -v -o "$T/v.alys" -- "$ALYS_PROGS/alloc_known" 1 2>&1 >/dev/null)
for f in GC_malloc GC_malloc_atomic GC_realloc GC_free; do
	check_match "probe on $f is at an emulated instruction" \
		"$(printf '%s\n' "$out" | grep -E "uprobe (session )?$f\+")" \
		"uprobe (session )?$f\+0x[0-9a-f]+ \((push|jmp|je|jne|call|nop)"
done
check_eq "no probe is single-stepped" "$(printf '%s\n' "$out" | grep -c 'single-stepped')" 0
check_match "Debian libgc: GC_malloc probed at its jmp (+5, after mov \$1,%esi)" \
	"$(printf '%s\n' "$out" | grep -E 'uprobe (session )?GC_malloc\+')" 'GC_malloc\+0x5 \(jmp'

# --- the costly programs verified at once, a helper object a CPU ------------
# A full trace loads 7 programs that walk or scan: up to 4 helper objects,
# one a CPU this process may use.
cpus=$(nproc)
want=$((cpus < 4 ? cpus : 4))
if [ "$want" -ge 2 ]; then
	check_match "programs verified on $want CPUs at once (-v)" \
		"$(printf '%s\n' "$out" | grep 'BPF programs loaded')" "verified on $want CPUs at once"
else
	check_match "one CPU: programs loaded in one object (-v)" \
		"$(printf '%s\n' "$out" | grep 'BPF programs loaded')" 'loaded in [0-9]+ ms$'
fi
# Loaded one after another in one object, the same trace.
ALYS_BPF_SERIAL_LOAD=1 "$BIN/alys-bpf" -v -o "$T/serial.alys" -- "$ALYS_PROGS/alloc_known" $N \
	>/dev/null 2>"$T/serial.err"
check_match "ALYS_BPF_SERIAL_LOAD=1: one object (-v)" \
	"$(grep 'BPF programs loaded' "$T/serial.err")" 'loaded in [0-9]+ ms$'
"$BIN/alys_converter" -q -f json -o "$T/serial.json" "$T/serial.alys"
size=$(sed -n 's/^SIZE=//p' "$T/alloc_known.out")
check_eq "ALYS_BPF_SERIAL_LOAD=1: the same $N events from make_points" \
	"$(json_query "$T/serial.json" "count(kind='malloc_atomic', size=$size, frame='make_points')")" $N

# --- every event carries its fields ------------------------------------------
check_eq "events carry kind, tid, time, size, addr, stack" \
	"$(json_query "$T/alloc_known.json" "all(e['tid'] > 0 and e['time_ns'] >= 0 and int(e['addr'], 16) > 0 and e['stack'] for e in events if e['kind'] != 'free')")" 1
check_eq "realloc events carry the old address" \
	"$(json_query "$T/alloc_known.json" "all(int(e['prev_addr'], 16) > 0 for e in events if e['kind'] == 'realloc')")" 1

# --- under sudo the app runs as the invoking user, who owns the trace ------
SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$BIN/alys-bpf" -q -o "$T/sudo.alys" -- \
	"$ALYS_PROGS/alloc_known" 10 >"$T/sudo.out" 2>&1
check_eq "sudo: app runs as the invoking user" "$(sed -n 's/^UID=//p' "$T/sudo.out")" 65534
check_eq "sudo: trace belongs to the invoking user, mode 0600" "$(stat -c '%u %a' "$T/sudo.alys")" "65534 600"
"$BIN/alys-bpf" -q --as-root -o "$T/root.alys" -- "$ALYS_PROGS/alloc_known" 10 >"$T/root.out" 2>&1
check_eq "--as-root keeps root" "$(sed -n 's/^UID=//p' "$T/root.out")" 0

# --- default output name: an ISO-8601 timestamp in the current directory --
(cd "$T" && mkdir -p default && cd default && "$BIN/alys-bpf" -q -- "$ALYS_PROGS/alloc_known" 10 >/dev/null)
check_match "default trace name is a timestamp" "$(ls "$T/default")" \
	'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.alys$'

# --- exit statuses ---------------------------------------------------------
"$BIN/alys-bpf" -q -o "$T/x.alys" -- "$ALYS_PROGS/exit_status" 42 >/dev/null 2>&1
check_eq "exit status 42 passed through" "$?" 42
"$BIN/alys-bpf" -q -o "$T/x.alys" -- "$ALYS_PROGS/exit_status" sigterm >/dev/null 2>&1
check_eq "death by SIGTERM gives 143" "$?" 143

# attach_for PID TRACE SECS: alys-bpf --sample all --pid PID -o TRACE (stderr
# to TRACE.err), SECS seconds once attached, then Ctrl-C; the tracer's status.
# Every call is recorded (the default with --pid is refill sampling, tested
# in test_refill.sh; here the counts are exact).
attach_for() {
	local tpid
	"$BIN/alys-bpf" -q --sample all -o "$2" --pid "$1" 2>"$2.err" &
	tpid=$!
	# the header is written once the probes are attached (slow under load)
	for _ in $(seq 300); do [ -s "$2" ] && break; sleep 0.1; done
	sleep "$3"
	kill -INT "$tpid"
	wait "$tpid"
}

# --- --pid: attach to a sleeping process, detach, it keeps running ----------
for variant in sleeper sleeper-static; do
	hb=$T/$variant.heartbeat
	"$ALYS_PROGS/$variant" 0 "$hb" 50 >"$T/$variant.out" &
	spid=$!
	wait_for_line "$T/$variant.out" '^READY' 20 || fail "$variant: started" "no READY line"
	sleep 0.5
	b0=$(wc -l <"$hb")
	attach_for "$spid" "$T/$variant.alys" 2
	check_eq "$variant: tracer exits 0 after Ctrl-C" "$?" 0
	b1=$(wc -l <"$hb")
	sleep 1.2
	check "$variant: process survives the detach" kill -0 "$spid"
	beats=$(wc -l <"$hb")
	sleep 1.2
	check_ge "$variant: process keeps working after detach" "$(wc -l <"$hb")" $((beats + 1))
	kill "$spid"
	wait "$spid" 2>/dev/null
	"$BIN/alys_converter" -f json -o "$T/$variant.json" "$T/$variant.alys"
	# What a failure needs to be understood (once seen in CI: 7 of ~2000).
	{
		cat "$T/$variant.alys.err"
		echo "heartbeats: $b0 before the attach, $b1 after it, $beats after the detach"
		json_query "$T/$variant.json" \
			"(len(events), sorted(set((e['kind'], e.get('size'), tuple(names(e)[:7])) for e in events))[:6], end, counters)"
	} >"$T/$variant.detail" 2>&1
	ALYS_FAIL_DETAIL=$T/$variant.detail
	# 2 s at one tick of 50 Points per 50 ms: ~2000; allow for start-up.
	check_ge "$variant: allocations after attach recorded from tick_alloc" \
		"$(json_query "$T/$variant.json" "count(kind='malloc_atomic', size=8, frame='tick_alloc')")" 1000
	ALYS_FAIL_DETAIL=
	check_eq "$variant: trace says detached" \
		"$(json_query "$T/$variant.json" "(end or {}).get('reason')")" signal
	check_eq "$variant: no event from before the attach" \
		"$(json_query "$T/$variant.json" "sum(1 for e in events if e['time_ns'] < 0)")" 0
done

# --- a program whose path has spaces: launched, attached, census ----------
SP="$T/dir with spaces"
mkdir -p "$SP"
cp "$ALYS_PROGS/sleeper" "$SP/sleeper prog"
cp "$ALYS_PROGS/census" "$SP/census prog"
"$BIN/alys-bpf" -q -o "$SP/launched.alys" -- "$SP/sleeper prog" 0.5 - 10 >/dev/null 2>"$SP/launched.err"
check_eq "spaces: launched, traced" "$?" 0
"$BIN/alys_converter" -q -f folded-stacks -o "$SP/launched.folded" "$SP/launched.alys"
check_match "spaces: launched: allocations from tick_alloc, symbolized from the binary" \
	"$(grep -c 'tick_alloc' "$SP/launched.folded")" '^[1-9]'
"$SP/sleeper prog" 0 - 10 >"$SP/attach.out" &
spid=$!
wait_for_line "$SP/attach.out" '^READY' 20 || fail "spaces: started" "no READY line"
attach_for "$spid" "$SP/attached.alys" 1.5
check_eq "spaces: attached with --pid, detached" "$?" 0
kill "$spid"
wait "$spid" 2>/dev/null
check_eq "spaces: attached: no warning" "$(grep -c . "$SP/attached.alys.err")" 0
"$BIN/alys_converter" -q -f folded-stacks -o "$SP/attached.folded" "$SP/attached.alys"
check_match "spaces: attached: allocations from tick_alloc, symbolized" \
	"$(grep -c 'tick_alloc' "$SP/attached.folded")" '^[1-9]'
"$BIN/alys-bpf" -q --census -o "$SP/census.alys" -- "$SP/census prog" >/dev/null 2>"$SP/census.err"
check_eq "spaces: --census: no error" "$(grep -c . "$SP/census.err")" 0
check_match "spaces: --census: censuses recorded" \
	"$("$BIN/alys_converter" -q -f census -o - "$SP/census.alys" | grep -cE '^ +[0-9]+ +[0-9]+ ')" '^[1-9]'

# --- the tracer exits when the attached process exits ----------------------
# The process ends once the tracer has attached (its header written), not
# after a fixed time: attaching takes seconds on a busy machine.
"$ALYS_PROGS/sleeper" 0 - 10 >"$T/short.out" &
spid=$!
wait_for_line "$T/short.out" '^READY' 20
timeout 60 "$BIN/alys-bpf" -q -o "$T/short.alys" --pid "$spid" &
tpid=$!
for _ in $(seq 300); do [ -s "$T/short.alys" ] && break; sleep 0.1; done
sleep 1
kill "$spid"
wait "$tpid"
check_eq "--pid: tracer ends with the process" "$?" 0
"$BIN/alys_converter" -f json -o "$T/short.json" "$T/short.alys"
check_eq "--pid: end reason is exit" "$(json_query "$T/short.json" "(end or {}).get('reason')")" exit
check_eq "--pid: refill sampling by default, probes attached 20% of the time" \
	"$(json_query "$T/short.json" "header['sample']")" "refill duty:20%"

# --- errors name cause and fix ---------------------------------------------
# not root, no BPF, no libgc: tests/e2e/test_faults.sh ("fault: ...")
out=$("$BIN/alys-bpf" --pid 999999 2>&1)
check_eq "missing pid: exit 1" "$?" 1
check_match "missing pid: says so" "$out" 'no process with pid 999999'
out=$("$BIN/alys-bpf" -o "$T/t.alys" -- no-such-command-xyz 2>&1)
check_eq "command not found: exit 127" "$?" 127
check_match "command not found: says so" "$out" 'no-such-command-xyz: command not found'
out=$("$BIN/alys-bpf" 2>&1)
check_eq "no command: usage error" "$?" 2

# --- a trace cut short: every complete block before the cut is used ----------
# Records travel in compressed blocks (FORMAT.md record 12). Cut at random
# bytes, a trace must convert with exactly the events of the records that
# end before the cut (their ends found by tests/e2e/record_bounds.py, a
# reader of its own), and say where the usable part ends.
"$BIN/alys-bpf" -q -o "$T/blocks.alys" -- "$ALYS_PROGS/deep_stacks-release" 16384 60 1 >/dev/null
"$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/record_bounds.py" "$T/blocks.alys" >"$T/bounds"
check_ge "cut trace: many blocks to cut" "$(awk '$2 == 12' "$T/bounds" | wc -l)" 5
size=$(stat -c %s "$T/blocks.alys")
first=$(awk 'NR == 1 { print $1 }' "$T/bounds")
# events N: the count the converter reports using, for a file cut at N bytes
events_at() {
	head -c "$1" "$T/blocks.alys" >"$T/cut.alys"
	"$BIN/alys_converter" -q -f folded-stacks -o /dev/null "$T/cut.alys" 2>&1 |
		sed -n 's/.*cut short at byte \([0-9]*\) .*using the \([0-9]*\) events.*/\1 \2/p'
}

prev_events=-1
bad_cuts=()
for cut in $("$ALYS_PYTHON" -c "import random; print(*sorted(random.sample(range($first, $size - 1), 6)))"); do
	bound=$(awk -v c="$cut" '$1 <= c { b = $1 } END { print b }' "$T/bounds")
	read -r at_cut n_cut <<<"$(events_at "$cut")"
	read -r at_bound n_bound <<<"$(events_at "$bound")"
	# the usable part ends at the last record end before the cut; cutting
	# exactly there gives the same events; later cuts never give fewer
	if [ "$at_cut" != "$bound" ] || [ "$n_cut" != "$n_bound" ] ||
	   [ "$at_bound" != "$bound" ] || [ "$n_cut" -lt "$prev_events" ]; then
		bad_cuts+=("$cut (said byte $at_cut with $n_cut events; record end $bound: $n_bound)")
	fi
	prev_events=$n_cut
done
check_eq "cut trace: 6 random cuts each use every record before them and name the byte" \
	"${bad_cuts[*]:-}" ""
last=$(awk '$2 == 12 { b = $1 } END { print b }' "$T/bounds")
# the last block complete: every event, only the end record missing
check_eq "cut trace: cut after the last block, every event kept" \
	"$(events_at "$last" | cut -d' ' -f2)" \
	"$("$BIN/alys_converter" -q -f json --depth 1 -o - "$T/blocks.alys" | "$ALYS_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["events"]))')"

summary
