#!/usr/bin/env bash
# End-to-end: faults survived (issue 6). Each case is a group of checks named
# "fault: <case>: <what is asserted>":
#   target SIGKILL, daemon SIGKILL, Ctrl-C during launch, fork+exec child,
#   multi-threaded target, ring buffer overrun, a memory cgroup too small
#   for the ring buffer, not root, no BPF (seccomp ENOSYS / EPERM, programs
#   the verifier refuses, capabilities dropped), no libgc, sudo user drop, trace
#   file safety (0600, no symlinks, no other user's or hard-linked file).
# The converter's handling of hostile and cut files is in
# tests/unit/test_converter.sh and tests/fuzz (make fuzz).
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T
P=$ALYS_PROGS
gcc -O2 -Wall -Wextra -Werror -o "$T/no_bpf" "$ALYS_ROOT/tests/e2e/fixtures/no_bpf.c" ||
	fail "build no_bpf" "gcc failed"

# convert NAME: $T/NAME.alys -> $T/NAME.json; status in CONV_RC, stderr in $T/NAME.cerr
convert() {
	"$BIN/alys_converter" -q -f json -o "$T/$1.json" "$T/$1.alys" 2>"$T/$1.cerr"
	CONV_RC=$?
}
# wait_gone PID SECONDS: wait until PID has exited; 1 on timeout
wait_gone() {
	timeout "$2" tail --pid="$1" -f /dev/null
}
# ticks NAME: Points allocated by sleeper's tick_alloc recorded in NAME.json
ticks() { json_query "$T/$1.json" "count(kind='malloc_atomic', size=8, frame='tick_alloc')"; }
# group_left PGID: processes still in process group PGID after up to 5 s
# (those left are listed on stderr)
group_left() {
	local i
	for i in $(seq 50); do
		pgrep -g "$1" >/dev/null || break
		sleep 0.1
	done
	ps -o pid=,stat=,args= -g "$1" >&2
	pgrep -g "$1" | wc -l
}

# --- target killed with SIGKILL mid-trace -------------------------------------
C="fault: target SIGKILL"
"$BIN/alys-bpf" -q -o "$T/tkill.alys" -- "$P/sleeper" 0 - 50 >"$T/tkill.out" 2>"$T/tkill.err" &
tpid=$!
wait_for_line "$T/tkill.out" '^READY' 30 || fail "$C: target started" "no READY line"
sleep 1
kill -KILL "$(awk '/^READY/ { print $2 }' "$T/tkill.out")"
wait_gone "$tpid" 20
check_eq "$C: tracer ends by itself" "$?" 0
wait "$tpid"
check_eq "$C: exit status 128+9 passed through" "$?" 137
convert tkill
check_eq "$C: trace converts, exit 0" "$CONV_RC" 0
check_eq "$C: trace is complete (end reason exit, status 137)" \
	"$(json_query "$T/tkill.json" "(end or {}).get('reason'), (end or {}).get('exit_status')")" '["exit", 137]'
check_eq "$C: no cut-short warning" "$(grep -c 'cut short' "$T/tkill.cerr")" 0
# 1 s of ticks, 50 Points each 50 ms: ~1000; allow for a slow start-up
check_ge "$C: allocations up to the kill recorded" "$(ticks tkill)" 300

# --- the daemon killed with SIGKILL ---------------------------------------------
C="fault: daemon SIGKILL"
hb=$T/dkill.heartbeat
"$BIN/alys-bpf" -q -o "$T/dkill.alys" -- "$P/sleeper" 0 "$hb" 50 >"$T/dkill.out" 2>"$T/dkill.err" &
tpid=$!
wait_for_line "$T/dkill.out" '^READY' 30 || fail "$C: target started" "no READY line"
spid=$(awk '/^READY/ { print $2 }' "$T/dkill.out")
[ -n "$spid" ] || spid=$(pgrep -P "$tpid" | head -n 1)
on_exit "kill -KILL ${spid:-$tpid} 2>/dev/null"
sleep 1.5
kill -KILL "$tpid"
wait "$tpid" 2>/dev/null
check_eq "$C: tracer died of SIGKILL" "$?" 137
check "$C: target survives the tracer" kill -0 "$spid"
beats=$(wc -l <"$hb")
sleep 1.2
check_ge "$C: target keeps working" "$(wc -l <"$hb")" $((beats + 1))
kill -KILL "$spid"
convert dkill
size=$(stat -c %s "$T/dkill.alys")
check_eq "$C: trace converts up to the last complete record, exit 0" "$CONV_RC" 0
check_match "$C: converter says it was cut short, at which byte" \
	"$(cat "$T/dkill.cerr")" "cut short at byte [0-9]+ \((no end record|the file ends inside a record)"
cut_at=$(sed -n 's/.*cut short at byte \([0-9]*\).*/\1/p' "$T/dkill.cerr")
check_le "$C: cut offset inside the file" "${cut_at:-x}" "$size"
check_eq "$C: warning counts the events kept" \
	"$(sed -n 's/.*using the \([0-9]*\) events.*/\1/p' "$T/dkill.cerr")" \
	"$(json_query "$T/dkill.json" "len(events)")"
check_eq "$C: json has no end record" "$(json_query "$T/dkill.json" "end is None")" 1
check_ge "$C: allocations before the kill recorded" "$(ticks dkill)" 300
check_eq "$C: one warning line" "$(wc -l <"$T/dkill.cerr")" 1

# --- Ctrl-C during launch ------------------------------------------------------
# As from a terminal: SIGINT to the whole process group (tracer and child),
# its default action not ignored (job control on, unlike plain `cmd &`).
# early: before the tracer catches signals; loading: it has blocked them for
# its signalfd and is loading the BPF program, the command not yet started;
# ready: the command runs.
C="fault: Ctrl-C during launch"
# catching PID: PID blocks SIGINT (bit 2 of SigBlk): past its signal setup
catching() {
	local blk
	blk=$(awk '/^SigBlk:/ { print $2 }' /proc/"$1"/status 2>/dev/null) || return 1
	[ -n "$blk" ] && (((16#$blk & 2) != 0))
}
for when in early loading ready; do
	rm -f "$T/cc.alys" "$T/cc.out"
	set -m
	"$BIN/alys-bpf" -q -o "$T/cc.alys" -- "$P/sleeper" 0 - 50 >"$T/cc.out" 2>"$T/cc.err" &
	tpid=$!
	set +m
	case $when in
	early) sleep 0.05 ;;
	loading)
		for _ in $(seq 1000); do catching "$tpid" && break; sleep 0.01; done ;;
	ready)
		wait_for_line "$T/cc.out" '^READY' 30 || fail "$C ($when): target started" "no READY line" ;;
	esac
	kill -INT -- -"$tpid"
	wait_gone "$tpid" 20
	check_eq "$C ($when): tracer ends" "$?" 0
	wait "$tpid"
	check_eq "$C ($when): exit status 130" "$?" 130
	check_eq "$C ($when): nothing left running" "$(group_left "$tpid")" 0
	if [ -f "$T/cc.alys" ]; then
		"$BIN/alys_converter" -f json -o "$T/cc.json" "$T/cc.alys" 2>"$T/cc.cerr"
		check_eq "$C ($when): the trace written is complete" \
			"$?:$(grep -c 'cut short' "$T/cc.cerr"):$(json_query "$T/cc.json" "end is not None")" "0:0:1"
		if grep -q 'nothing traced' "$T/cc.err"; then
			check_eq "$C ($when): stopped before the command ran: no event, reason signal" \
				"$(json_query "$T/cc.json" "len(events), end['reason']")" '[0, "signal"]'
		elif grep -q READY "$T/cc.out"; then
			check_eq "$C ($when): the command died of SIGINT (end: exit, 130)" \
				"$(json_query "$T/cc.json" "end['reason'], end['exit_status']")" '["exit", 130]'
		else
			fail "$C ($when): outcome" "a trace, but neither 'nothing traced' nor a started command"
		fi
	else
		check_eq "$C ($when): no trace file: interrupted before the tracer set up" \
			"$(cat "$T/cc.err" "$T/cc.out")" ""
	fi
done

# --- a target that forks and execs a child ---------------------------------------
# Only the launched (or attached) process is traced: uprobes are filtered by
# its memory map, which the child leaves at fork and replaces at exec.
C="fault: fork+exec child"
timeout 60 "$BIN/alys-bpf" -q -o "$T/fork.alys" -- "$P/faults" fork 1000 >"$T/fork.out" 2>"$T/fork.err"
check_eq "$C: exit status of the parent passed through" "$?" 0
check_eq "$C: child ran to completion" "$(sed -n 's/^CHILD_STATUS=//p' "$T/fork.out")" 0
ppid_=$(sed -n 's/^PARENT_PID=//p' "$T/fork.out")
cpid=$(sed -n 's/^CHILD_PID=//p' "$T/fork.out")
check_match "$C: child is another process" "$cpid" "^[0-9]+$"
convert fork
check_eq "$C: trace converts cleanly" "$CONV_RC:$(wc -l <"$T/fork.cerr")" "0:0"
check_eq "$C: header pid is the parent" "$(json_query "$T/fork.json" "header['pid']")" "$ppid_"
check_eq "$C: parent's 2 x 1000 Blobs recorded" \
	"$(json_query "$T/fork.json" "count(kind='malloc_atomic', size=32, frames=['Blob.new', 'parent_alloc'])")" 2000
check_eq "$C: child's allocations not traced" \
	"$(json_query "$T/fork.json" "count(frame='child_alloc')"):$(json_query "$T/fork.json" "count(tid=${cpid:-0})")" "0:0"

# --- a multi-threaded target (-Dpreview_mt) --------------------------------------
C="fault: multi-threaded target"
# Blob.new called by thread_alloc, as in faults.cr
blobs="select(kind='malloc_atomic', size=32, frames=['Blob.new', 'thread_alloc'])"
CRYSTAL_WORKERS=4 timeout 60 "$BIN/alys-bpf" -q -o "$T/mt.alys" -- "$P/faults" threads 8 2000 \
	>"$T/mt.out" 2>"$T/mt.err"
check_eq "$C: exit 0" "$?" 0
convert mt
check_eq "$C: trace converts cleanly" "$CONV_RC:$(wc -l <"$T/mt.cerr")" "0:0"
check_eq "$C: nothing lost" "$(json_query "$T/mt.json" "counters.get('ringbuf_drop_event', -1) + counters.get('ringbuf_drop_stack', -1)")" 0
check_eq "$C: all 8 x 2000 Blobs recorded from thread_alloc" \
	"$(json_query "$T/mt.json" "len($blobs)")" \
	"$(sed -n 's/^COUNT=//p' "$T/mt.out")"
tids=$(sed -n 's/^TIDS=//p' "$T/mt.out")
check_ge "$C: the program used several threads" "$(tr ',' '\n' <<<"$tids" | wc -l)" 2
check_eq "$C: the same threads in the trace" \
	"$(json_query "$T/mt.json" "','.join(str(t) for t in sorted({e['tid'] for e in $blobs}))")" "$tids"
check_eq "$C: per-thread counts match the program's" \
	"$(json_query "$T/mt.json" "','.join('%d:%d' % (t, c) for t, c in sorted(__import__('collections').Counter(e['tid'] for e in $blobs).items()))")" \
	"$(sed -n 's/^PER_TID=//p' "$T/mt.out")"

# --- ring buffer overrun under a burst ------------------------------------------
# alloc_known makes the same calls every run: a run with the default buffer
# gives their number; a 4 KiB buffer (~50 events) overflows in the burst.
C="fault: ring buffer overrun"
N=50000
"$BIN/alys-bpf" -q -o "$T/rbfull.alys" -- "$P/alloc_known" $N >/dev/null 2>"$T/rbfull.err"
rc=$?
convert rbfull
# a failure here shows what the daemon and the converter said
cat "$T/rbfull.err" "$T/rbfull.cerr" >"$T/rbfull.detail"
ALYS_FAIL_DETAIL=$T/rbfull.detail
check_eq "$C: baseline: exit status 3 passed through, trace converts" "$rc:$CONV_RC" 3:0
# the calls: events less the frees liveness inferred (a death lost to a
# full buffer is counted apart, in ringbuf_drop_death)
calls=$(json_query "$T/rbfull.json" "sum(1 for e in events if e.get('cause') is None)")
check_eq "$C: baseline with the default buffer loses nothing" \
	"$(json_query "$T/rbfull.json" "counters.get('ringbuf_drop_event', -1)")" 0
ALYS_FAIL_DETAIL=
"$BIN/alys-bpf" -o "$T/rb.alys" --ringbuf-size 4K -- "$P/alloc_known" $N >/dev/null 2>"$T/rb.err"
check_eq "$C: exit status unchanged" "$?" 3
dropped=$(sed -n 's/.*ring buffer overflowed: \([0-9]*\) events.*/\1/p' "$T/rb.err")
check_ge "$C: daemon reports the drops at the end" "${dropped:-0}" 1
convert rb
check_eq "$C: trace converts, exit 0" "$CONV_RC" 0
check_eq "$C: drops stored in the trace" \
	"$(json_query "$T/rb.json" "counters.get('ringbuf_drop_event')")" "${dropped:-x}"
check_match "$C: converter warns with the number lost" "$(cat "$T/rb.cerr")" \
	"lost ${dropped:-x} events \(ring buffer full\).*--ringbuf-size"
check_eq "$C: recorded + dropped = calls made" \
	"$(($(json_query "$T/rb.json" "sum(1 for e in events if e.get('cause') is None)") + ${dropped:-0}))" "$calls"
out=$("$BIN/alys-bpf" --ringbuf-size 5000 -- "$P/alloc_known" 1 2>&1)
check_eq "$C: bad --ringbuf-size is a usage error" "$?:$(grep -c 'power of two' <<<"$out")" "2:1"

# --- a memory cgroup too small for the ring buffer ---------------------------------
# Since Linux 5.11 the kernel charges BPF maps to the memory cgroup of the
# process that makes them: a 1 GiB ring buffer is refused in a 256 MiB one.
C="fault: memory cgroup limit"
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	cg=/sys/fs/cgroup/alys-faults-$$ lim=memory.max	# cgroup v2
else
	cg=/sys/fs/cgroup/memory/alys-faults-$$ lim=memory.limit_in_bytes	# v1
fi
if mkdir "$cg" && echo $((256 << 20)) >"$cg/$lim"; then
	out=$(echo "$BASHPID" >"$cg/cgroup.procs" && exec "$BIN/alys-bpf" --ringbuf-size 1G \
		-o "$T/mc.alys" -- "$P/alloc_known" 10 2>&1)
	check_eq "$C: exit 1" "$?" 1
	check_match "$C: names the map, its size, the cgroup and the option" "$out" \
		"ring buffer in the kernel \(1073741824 bytes\): Cannot allocate memory.*memory cgroup.*memory.max.*--ringbuf-size"
	check_eq "$C: the command did not run, no trace file" \
		"$(grep -c '^COUNT=' <<<"$out"):$(ls "$T/mc.alys" 2>/dev/null)" "0:"
	rmdir "$cg"
else
	check_eq "$C: a memory cgroup made ($cg, $lim)" "no" "yes"
fi

# --- not root ------------------------------------------------------------------
C="fault: not root"
out=$(cd "$T" && setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$BIN/alys-bpf" -o "$T/nr.alys" -- "$P/alloc_known" 2>&1)
check_eq "$C: exit 1" "$?" 1
check_match "$C: names cause and fix" "$out" 'must run as root.*CAP_BPF.*sudo'
check_eq "$C: one line, no trace file" "$(wc -l <<<"$out"):$(ls "$T/nr.alys" 2>/dev/null)" "1:"

# --- no BPF --------------------------------------------------------------------
C="fault: no BPF"
# refused_bpf MODE WHAT ERE: under no_bpf MODE, alys-bpf exits 1 with a
# message matching ERE (cause and fix), the command never run, no trace file
refused_bpf() {
	local out
	out=$("$T/no_bpf" "$1" "$BIN/alys-bpf" -o "$T/nb.alys" -- "$P/alloc_known" 10 2>&1)
	check_eq "$C: $2: exit 1" "$?" 1
	check_match "$C: $2: names cause and fix" "$out" "$3"
	check_eq "$C: $2: the command did not run, no trace file" \
		"$(grep -c '^COUNT=' <<<"$out"):$(ls "$T/nb.alys" 2>/dev/null)" "0:"
}
refused_bpf ENOSYS "kernel without bpf(2) (ENOSYS)" \
	'no bpf\(2\) system call.*CONFIG_BPF_SYSCALL=y.*seccomp profile'
refused_bpf EPERM "bpf(2) forbidden (EPERM)" \
	'refused bpf\(2\) \(Operation not permitted\).*CAP_BPF.*sudo'
# the verifier's EACCES is not a missing capability (EPERM)
refused_bpf VERIFIER "programs the verifier refuses (EACCES)" \
	"verifier refused it \(Permission denied\).*Linux $(uname -r | sed 's/[.+]/\\&/g').*ALYS_BPF_DEBUG=1"
out=$(setpriv --bounding-set=-all --inh-caps=-all "$BIN/alys-bpf" -o "$T/nb.alys" -- \
	"$P/alloc_known" 10 2>&1)
check_eq "$C: root without capabilities: exit 1" "$?" 1
check_match "$C: root without capabilities: names cause and fix" "$out" 'refused bpf\(2\).*CAP_BPF.*sudo'
check_eq "$C: one line each" "$(wc -l <<<"$out")" 1

# --- a binary without libgc ------------------------------------------------------
C="fault: no libgc"
out=$("$BIN/alys-bpf" -o "$T/ng.alys" -- /bin/true 2>&1)
check_eq "$C: launched: exit 1" "$?" 1
check_match "$C: launched: says why" "$out" 'no GC_malloc.*not a Crystal program'
sleep 30 &
spid=$!
out=$("$BIN/alys-bpf" -o "$T/ng.alys" --pid $spid 2>&1)
check_eq "$C: attached: exit 1" "$?" 1
check_match "$C: attached: says why" "$out" "pid $spid has no GC_malloc.*not a Crystal program"
check "$C: attached: the process is left alone" kill -0 $spid
kill $spid
check_eq "$C: no trace file" "$(ls "$T/ng.alys" 2>/dev/null)" ""

# --- under sudo the app never runs as root unless --as-root ------------------------
C="fault: sudo"
SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$BIN/alys-bpf" -q -o "$T/sudo.alys" -- \
	"$P/faults" ids >"$T/sudo.out" 2>&1
ids=$(grep -E '^(UID|EUID|GID|EGID|GROUPS|USER)=' "$T/sudo.out" | tr '\n' ' ')
check_eq "$C: app runs as the invoking user: uids, gids, groups, USER" "$ids" \
	"UID=65534 EUID=65534 GID=65534 EGID=65534 GROUPS=65534 USER=nobody "
check_eq "$C: trace belongs to the invoking user, mode 0600" "$(stat -c '%u %a' "$T/sudo.alys")" "65534 600"
SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$BIN/alys-bpf" -q --as-root -o "$T/asroot.alys" -- \
	"$P/faults" ids >"$T/asroot.out" 2>&1
check_eq "$C: --as-root runs it as root" "$(sed -n 's/^EUID=//p' "$T/asroot.out")" 0

# --- trace files: 0600, never through a symlink, never someone else's file ----------
C="fault: trace file"
(umask 000 && "$BIN/alys-bpf" -q -o "$T/umask.alys" -- "$P/alloc_known" 10 >/dev/null 2>&1)
check_eq "$C: created 0600 even with umask 000" "$(stat -c %a "$T/umask.alys")" 600
echo old >"$T/mine.alys"
chmod 644 "$T/mine.alys"
"$BIN/alys-bpf" -q -o "$T/mine.alys" -- "$P/alloc_known" 10 >/dev/null 2>&1
convert mine
check_eq "$C: own existing file overwritten, made 0600, valid trace" \
	"$(stat -c %a "$T/mine.alys"):$CONV_RC" "600:0"
# refuse NAME WHAT ERE: alys-bpf -o $T/NAME.alys must fail with a message
# matching ERE, leaving $T/victim as it was, without running the command
refuse() {
	local out rc
	echo precious >"$T/victim"
	chmod 640 "$T/victim"
	out=$("$BIN/alys-bpf" -o "$T/$1.alys" -- "$P/alloc_known" 10 2>&1)
	rc=$?
	check_eq "$C: $2: exit 1" "$rc" 1
	check_match "$C: $2: says why" "$out" "$3"
	check_eq "$C: $2: target file untouched, command not run" \
		"$(cat "$T/victim"):$(stat -c %a "$T/victim"):$(grep -c '^COUNT=' <<<"$out")" "precious:640:0"
}
rm -f "$T/victim"
ln -s "$T/victim" "$T/link.alys"
refuse link "symlink" 'is a symbolic link: refusing'
ln -s "$T/victim" "$T/dangling.alys"
rm -f "$T/victim"
out=$("$BIN/alys-bpf" -o "$T/dangling.alys" -- "$P/alloc_known" 10 2>&1)
check_eq "$C: dangling symlink: refused, nothing created behind it" \
	"$?:$(ls "$T/victim" 2>/dev/null)" "1:"
echo precious >"$T/victim"
ln "$T/victim" "$T/hard.alys"
refuse hard "hard link" 'has 2 hard links: refusing'
rm -f "$T/hard.alys" "$T/victim"
echo precious >"$T/other.alys"
chown 65534:65534 "$T/other.alys"
chmod 640 "$T/other.alys"
out=$("$BIN/alys-bpf" -o "$T/other.alys" -- "$P/alloc_known" 10 2>&1)
check_eq "$C: another user's file: refused, untouched" \
	"$?:$(cat "$T/other.alys"):$(stat -c '%u %a' "$T/other.alys")" "1:precious:65534 640"
check_match "$C: another user's file: says why" "$out" 'belongs to uid 65534: refusing'

summary
