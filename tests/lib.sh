# tests/lib.sh -- helpers for the bash test scripts (tests/unit/*.sh and
# tests/e2e/*.sh). Source it:
#
#   . "$(dirname "$0")/../lib.sh"
#   ALYS_BIN=${1:-$ALYS_BIN}          # bin dir given by run-all.sh
#   require_root_bpf                  # e2e tests only
#   ...
#   check_eq "exit status passes through" "$rc" 3
#   summary                           # last line: "N passed, M failed"
#
# Variables (set by run-all.sh; defaults for running a test by hand):
#   ALYS_ROOT   repository root
#   ALYS_BIN    directory holding alys-bpf and alys_converter (bin or bin-san)
#   ALYS_PROGS  directory of the built test programs (tests/build-programs.sh)
#
# Functions return 0/1 and never exit, except require_root_bpf and summary.
#
# The toolchain matrix: gc_matrix NAME prints NAME's builds linked with the
# other libgc builds (tests/build-programs.sh: NAME-clang, as the official
# Crystal tarballs build libgc; NAME-gcclarge; NAME-d13 and NAME-d13static,
# Debian 13's crystal 1.14 and libgc 8.2.8), for the tests to run beside
# NAME and NAME-static. On the plain build only: the sanitizers' build runs
# the same userspace code on them and would only double the time.
# ALYS_GC_MATRIX="SUFFIX ..." names other builds (by hand: programs built
# with Crystal 1.21 put beside the others in ALYS_PROGS, docs/DESIGN.md).

ALYS_ROOT=${ALYS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
ALYS_BIN=${ALYS_BIN:-$ALYS_ROOT/bin}
ALYS_PROGS=${ALYS_PROGS:-$ALYS_ROOT/tests/build/programs}
export ALYS_ROOT ALYS_BIN ALYS_PROGS

_ALYS_PASSED=0
_ALYS_FAILED=0

# ok NAME: record a passed check.
ok() {
	_ALYS_PASSED=$((_ALYS_PASSED + 1))
	printf 'ok   %s\n' "$1"
}

# fail NAME MSG: record a failed check. When ALYS_FAIL_DETAIL names a
# non-empty file (what the program under test printed), its head follows.
fail() {
	_ALYS_FAILED=$((_ALYS_FAILED + 1))
	printf 'FAIL %s: %s\n' "$1" "${2:-}"
	if [ -n "${ALYS_FAIL_DETAIL:-}" ] && [ -s "$ALYS_FAIL_DETAIL" ]; then
		head -n 20 "$ALYS_FAIL_DETAIL" | sed 's/^/#   /'
	fi
}

# check NAME CMD...: pass if CMD succeeds.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name" "command failed: $*"; fi
}

# check_status NAME STATUS: pass if STATUS, the status of the test
# expression just run ("... && ...; check_status NAME $?"), is 0.
check_status() {
	if [ "$2" -eq 0 ]; then ok "$1"; else fail "$1" "status $2"; fi
}

# check_eq NAME ACTUAL EXPECTED: pass if the two strings are equal.
check_eq() {
	if [ "$2" == "$3" ]; then
		ok "$1"
	else
		fail "$1" "got '$2', expected '$3'"
	fi
}

# _is_int STR: STR is a (possibly negative) decimal integer.
_is_int() { [[ $1 =~ ^-?[0-9]+$ ]]; }

# check_ge NAME ACTUAL MIN: pass if integer ACTUAL >= MIN.
check_ge() {
	if ! _is_int "$2" || ! _is_int "$3"; then
		fail "$1" "not integers: '$2' >= '$3'"
	elif [ "$2" -ge "$3" ]; then
		ok "$1"
	else
		fail "$1" "got $2, expected >= $3"
	fi
}

# check_le NAME ACTUAL MAX: pass if integer ACTUAL <= MAX.
check_le() {
	if ! _is_int "$2" || ! _is_int "$3"; then
		fail "$1" "not integers: '$2' <= '$3'"
	elif [ "$2" -le "$3" ]; then
		ok "$1"
	else
		fail "$1" "got $2, expected <= $3"
	fi
}

# check_match NAME STRING ERE: pass if STRING matches the extended regex.
check_match() {
	if printf '%s\n' "$2" | grep -Eq -- "$3"; then
		ok "$1"
	else
		fail "$1" "'$2' does not match /$3/"
	fi
}

# summary: print "N passed, M failed" as the last line; exit 1 if anything
# failed or nothing was checked, else 0. Call it last.
summary() {
	local rc=0
	if [ $((_ALYS_PASSED + _ALYS_FAILED)) -eq 0 ]; then
		_ALYS_FAILED=1
		echo "FAIL summary: no checks ran"
	fi
	[ "$_ALYS_FAILED" -eq 0 ] || rc=1
	echo "$_ALYS_PASSED passed, $_ALYS_FAILED failed"
	exit "$rc"
}

# require_root_bpf: end the test as FAILED (never skipped) unless we are root
# and the kernel offers BPF and uprobes. Mounts tracefs/debugfs if needed.
require_root_bpf() {
	local why=()
	[ "$(id -u)" -eq 0 ] || why+=("not running as root (e2e tests need root)")
	[ -r /sys/kernel/btf/vmlinux ] ||
		why+=("/sys/kernel/btf/vmlinux missing: kernel without BTF")
	[ -e /sys/bus/event_source/devices/uprobe/type ] ||
		why+=("no uprobe PMU (/sys/bus/event_source/devices/uprobe): kernel without CONFIG_UPROBE_EVENTS")
	if [ "$(id -u)" -eq 0 ]; then
		if [ ! -e /sys/kernel/tracing/uprobe_events ] &&
			[ ! -e /sys/kernel/debug/tracing/uprobe_events ]; then
			mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null ||
				mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
		fi
		if command -v bpftool >/dev/null 2>&1; then
			bpftool prog list >/dev/null 2>&1 ||
				why+=("bpf(2) does not work here ('bpftool prog list' failed)")
		else
			why+=("bpftool not installed (run scripts/setup-debian.sh)")
		fi
	fi
	if [ ${#why[@]} -gt 0 ]; then
		local w
		echo "############################################################"
		echo "# FAIL: this end-to-end test needs root with BPF and uprobes:"
		for w in "${why[@]}"; do echo "#   - $w"; done
		echo "############################################################"
		fail "require_root_bpf" "${why[*]}"
		summary
	fi
}

# json_query FILE EXPR: evaluate the Python expression EXPR over a converter
# JSON file (alys_converter -f json) and print the result (booleans as 1/0,
# numbers and strings plainly, anything else as JSON). Names available:
#   d, header, events, counters, end     the parsed document and its parts
#   names(e)        list of frame names of event e, innermost first
#   in_stack(e, s)  some frame name of e contains substring s
#   select(kind=None, size=None, frame=None, frames=None, tid=None)
#                   events with that kind ("malloc", "malloc_atomic",
#                   "realloc", "free"), size, a frame containing `frame`,
#                   and frames containing each string of the list `frames`
#                   in that order, innermost first (not necessarily adjacent)
#   count(...)      len(select(...));  total(...)  sum of their sizes
# Example: json_query t.json 'count(kind="malloc_atomic", size=8, frame="make_points")'
# A large FILE is parsed once and kept by a server process for the later
# queries (tests/json_query.py); the servers die with this script.
# Uses /usr/bin/python3 when present (pyenv shims cost ~0.3 s per call);
# set ALYS_PYTHON to override.
ALYS_PYTHON=${ALYS_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
# Where scripts/setup-debian.sh installs the npm packages the browser tests
# open (speedscope, mermaid): ALYS_WEB_TOOLS/node_modules/...
ALYS_WEB_TOOLS=${ALYS_WEB_TOOLS:-/opt/alys-bpf-web}
# browser_checks NAME FILE: a browser script's "ok ..." / "FAIL ..." lines
# as this script's checks, anything else (a traceback) shown under them.
browser_checks() {
	local line
	while read -r line; do
		case $line in
		ok*) ok "$1 in chromium: ${line#ok   }" ;;
		FAIL*) fail "$1 in chromium" "${line#FAIL }" ;;
		*) echo "    $line" ;;
		esac
	done <"$2"
}

json_query() {
	"$ALYS_PYTHON" "$ALYS_ROOT/tests/json_query.py" "$1" "$2"
}

# _alys_jq_stop: end the json_query servers of this script, silently (it
# runs after summary's last line; a server may be exiting on its own).
_alys_jq_stop() {
	local p pid
	for p in "$ALYS_JQ_DIR"/*.pid; do
		pid=$(cat "$p" 2>/dev/null) && [ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
	rm -rf "$ALYS_JQ_DIR"
	return 0
}

# wait_for_line FILE ERE TIMEOUT: wait up to TIMEOUT seconds (may be
# fractional) until a line of FILE matches ERE. Returns 0 if found, else 1.
wait_for_line() {
	local file=$1 re=$2 timeout=$3
	local deadline now
	deadline=$(($(date +%s%N) + $(awk -v t="$timeout" 'BEGIN { printf "%.0f", t * 1e9 }')))
	while :; do
		if [ -f "$file" ] && grep -Eq -- "$re" "$file"; then
			return 0
		fi
		now=$(date +%s%N)
		[ "$now" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# on_exit CMD: run the shell command CMD when the test script exits (in
# reverse order of registration), e.g. on_exit "kill $pid 2>/dev/null".
_ALYS_ON_EXIT=()
_alys_run_on_exit() {
	local i
	for ((i = ${#_ALYS_ON_EXIT[@]} - 1; i >= 0; i--)); do
		eval "${_ALYS_ON_EXIT[$i]}" || true
	done
}
on_exit() {
	_ALYS_ON_EXIT+=("$1")
	trap _alys_run_on_exit EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
}

# make_tmpdir VAR: create a fresh directory under $TMPDIR, store its path in
# the variable VAR and remove it when the script exits (kept, with a note on
# stderr, when ALYS_KEEP_TMP=1). Do not call it in $(...): the removal would
# be registered in the subshell.
#   make_tmpdir T; "$ALYS_BIN/alys-bpf" -o "$T/t.alys" -- ...
make_tmpdir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/alys-test.XXXXXX") || return 1
	if [ "${ALYS_KEEP_TMP:-0}" != 1 ]; then
		on_exit "rm -rf '$d'"
	else
		echo "(keeping $d)" >&2
	fi
	printf -v "$1" '%s' "$d"
}

# Where json_query's servers keep their sockets: one directory per script.
ALYS_JQ_OWNER=$$
ALYS_JQ_DIR=$(mktemp -d "${TMPDIR:-/tmp}/alys-jq.XXXXXX") || ALYS_JQ_DIR=
export ALYS_JQ_OWNER ALYS_JQ_DIR
[ -z "$ALYS_JQ_DIR" ] || on_exit _alys_jq_stop

# cpu_load: with ALYS_LOAD=N (N > 0), keep N CPUs busy until the script
# exits (at most 20 minutes): production hosts and CI are never idle, and
# liveness and sampling must hold on them (issue 23). The busy loops run at
# the tests' own priority. Without ALYS_LOAD, nothing.
cpu_load() {
	local n=${ALYS_LOAD:-0} i pid
	[ "$n" -gt 0 ] 2>/dev/null || return 0
	for ((i = 0; i < n; i++)); do
		timeout 1200 bash -c 'while :; do :; done' &
		pid=$!
		on_exit "kill $pid 2>/dev/null"
	done
	echo "note: $n busy loops running beside the test (ALYS_LOAD=$n)"
}

# start_http_json DIR: the HTTP benchmark server (bench/workloads/
# http_json.cr) on a random loopback port, warmed up; sets PORT and SERVER,
# stops it when the script exits.
start_http_json() {
	PORT=$((20000 + RANDOM % 20000))
	"$ALYS_PROGS/http_json" $PORT >"$1/server.out" 2>&1 &
	SERVER=$!
	on_exit "kill $SERVER 2>/dev/null"
	wait_for_line "$1/server.out" '^listening' 30 || fail "server started" "no listening line"
	wrk -t1 -c4 -d1s "http://127.0.0.1:$PORT/" >/dev/null 2>&1	# warm up
}

# sanitized BINDIR: BINDIR's programs are the ASan+UBSan build. Its BPF
# programs are the same as the plain build's: tests that measure the kernel
# side at scale may run smaller there, through the same userspace paths.
sanitized() { ldd "$1/alys-bpf" 2>/dev/null | grep -q 'libasan'; }
gc_matrix() {
	sanitized "${BIN:-$ALYS_BIN}" && return
	for s in ${ALYS_GC_MATRIX:-clang gcclarge d13 d13static}; do printf '%s ' "$1-$s"; done
}

# browsers_for BINDIR: whether BINDIR's outputs are opened in chromium here.
# The two builds write the same bytes; a browser costs ~5 s a file, so the
# plain build's run opens them and the sanitizers' does not.
browsers_for() { ! sanitized "$1"; }

# off_pct EST TRUTH: |EST - TRUTH| / TRUTH in hundredths of a percent.
off_pct() {
	awk -v e="$1" -v t="$2" 'BEGIN { d = (e - t) / t * 100; printf "%d", (d < 0 ? -d : d) * 100 }'
}

# profile.proto, as Debian ships it with google/pprof
PROTO_DIR=/usr/share/gocode/src/github.com/google/pprof/proto

# pprof_check_bin: tests/pprof_check built (once, under a lock: the two
# builds' suites run at once) with Debian's Go and google/pprof.
pprof_check_bin() {
	local out=$ALYS_ROOT/tests/build/pprof_check src=$ALYS_ROOT/tests/pprof_check/main.go
	mkdir -p "$ALYS_ROOT/tests/build"
	(
		flock 9
		[[ -x $out && $out -nt $src ]] && exit 0
		GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= \
			GOCACHE="$ALYS_ROOT/tests/build/.go-cache" go build -o "$out.new" "$src" &&
			mv "$out.new" "$out"
	) 9>"$ALYS_ROOT/tests/build/.pprof_check.lock" >&2 || return 1
	echo "$out"
}

# pprof_valid FILE...: google/pprof's own parser and CheckValid, and ids
# 1..n in order (what Parca needs): its words on stdout, status 0 if valid.
pprof_valid() {
	local bin
	bin=$(pprof_check_bin) || { echo "cannot build tests/pprof_check (go, golang-github-google-pprof-dev)"; return 1; }
	"$bin" "$@" 2>&1
}

# check_pprof_valid LABEL FILE...: a check that each FILE is a valid pprof.
check_pprof_valid() {
	local label=$1 out
	shift
	if out=$(pprof_valid "$@"); then
		ok "$label: google/pprof's parser and CheckValid accept it, ids in order"
	else
		fail "$label: google/pprof's parser and CheckValid accept it, ids in order" \
			"$(printf '%s\n' "$out" | grep -v ': ok (' | head -3)"
	fi
}

# check_all_pprof_valid DIR: every .pb.gz under DIR (what a test wrote,
# fetched or received) valid, and at least one there.
check_all_pprof_valid() {
	local files
	mapfile -t files < <(find "$1" -name '*.pb.gz' | sort)
	check_ge "pprof files written by this test" "${#files[@]}" 1
	((${#files[@]})) && check_pprof_valid "all ${#files[@]} of them" "${files[@]}"
}

# pprof_query FILE.pb.gz EXPR: decode with protoc (an independent decoder), evaluate EXPR over the
# parsed message (p: dict of repeated fields; helpers below). A profile
# google/pprof's CheckValid refuses (pprof_valid) is an answer no query
# gets.
pprof_query() {
	local invalid
	invalid=$(pprof_valid "$1") || { echo "invalid pprof: $invalid"; return 1; }
	gzip -dc "$1" | protoc --decode=perftools.profiles.Profile -I "$PROTO_DIR" \
		"$PROTO_DIR/profile.proto" >"$1.txt" || { echo "protoc failed"; return 1; }
	ALYS_ROOT="$ALYS_ROOT" "$ALYS_PYTHON" - "$1.txt" "$2" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["ALYS_ROOT"], "tests"))
from pprof_text import decode_text
p = decode_text(open(sys.argv[1]).read())

st = p["string_table"]
st = [""] + st if st[0] != "" else st   # protoc omits nothing, but be safe
types = [st[t.get("type", [0])[0]] for t in p["sample_type"]]
def total(name):
    k = types.index(name)
    return sum(s["value"][k] for s in p.get("sample", []))
def seen(name):
    """a pprof name as a user reads it: the look-alikes of :: and . that keep
    pprof from cutting names (profile/pprof.c) print as the characters"""
    return name.replace("\u2060", "").replace("\u2024", ".")
funcs = {f["id"][0]: (seen(st[f.get("name", [0])[0]]), st[f.get("filename", [0])[0]],
                      st[f.get("system_name", [0])[0]], st[f.get("name", [0])[0]])
         for f in p.get("function", [])}
locs = {l["id"][0]: [(funcs[ln["function_id"][0]], ln.get("line", [0])[0]) for ln in l.get("line", [])] for l in p.get("location", [])}
def lines_of(name):
    """(file, line) pairs of every Line whose function name contains name"""
    return sorted({(f[1], line) for ls in locs.values() for f, line in ls if name in f[0]})
def multi_line_with(name):
    """a location whose Lines hold an inlined frame named name, not the last"""
    return any(any(name == f[0] for f, _ in ls[:-1]) for ls in locs.values() if len(ls) > 1)
v = eval(sys.argv[2])
print(v if not isinstance(v, bool) else int(v))
PY
}

# seen: pprof's names as a terminal or a browser shows them (the word
# joiner between the colons of :: is invisible, U+2024 is a dot)
seen() {
	sed 's/\xe2\x81\xa0//g; s/\xe2\x80\xa4/./g'
}

# bpf_prog_ids PID: the ids of the BPF programs process PID holds open, one
# a line (from its fds' fdinfo: Debian's bpftool shows no pids).
bpf_prog_ids() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -un
}
