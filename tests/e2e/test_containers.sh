#!/usr/bin/env bash
# End-to-end: Crystal programs in containers, traced and named from the host
# (issue 34). A minimal root file system (the HTTP benchmark server as
# /app/server and its libraries, copied from this machine) is run the way
# container runtimes run one (tests/e2e/container.c: new mount and pid
# namespaces, pivot_root, its own /proc; or a chroot), in a cgroup named as
# Docker names one. From the host:
#   --pid -o     the trace keeps the container's files (TRACE.debug); after
#                the container and its root are removed, the converter run
#                from another directory names the top 10 rows as the same
#                program run on the host names them; the report and the
#                JSON header name the container and the pid inside
#   --http       go tool pprof's top 10 rows named, under wrk
#   --all --push profiles named, labelled container_id, cgroup and ns_pid;
#                a process in no container (the host's server) has none
# A running binary replaced on disk (a deploy) is named from the mapped
# file; the agent itself in a container (host pid namespace, /sys bound:
# the DaemonSet way) traces and names both; launch mode inside a
# privileged container works and its trace converts there.
# run-all-builds: bin
# run-all-alone: the --all agent would trace the programs of a test beside it
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
require_root_bpf
make_tmpdir T
. "$HERE/agent_lib.sh"
for tool in wrk curl go cc; do
	command -v $tool >/dev/null || fail "$tool installed" "run scripts/setup-debian.sh"
done
export PPROF_TMPDIR=$T/pprof
cc -Wall -Wextra -Werror -O2 -o "$T/container" "$HERE/container.c" ||
	fail "container helper built" "cc failed"
SRV=$ALYS_PROGS/http_json
[ -x "$SRV" ] || fail "http_json built" "no $SRV (tests/build-programs.sh)"

# copy_with_libs ROOT FILE DEST: FILE at ROOT/DEST, its libraries at their
# paths under ROOT.
copy_with_libs() {
	mkdir -p "$1$(dirname "$3")"
	cp "$2" "$1$3"
	for lib in $(ldd "$2" | grep -o '/[^ ]*'); do
		mkdir -p "$1$(dirname "$lib")"
		cp -L "$lib" "$1$lib"
	done
}
# a cgroup named as Docker names its containers' (cgroup v2 or v1)
new_cgroup() {
	local base id
	id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	if [ -e /sys/fs/cgroup/cgroup.controllers ]; then base=/sys/fs/cgroup/alys-test-docker
	else base=/sys/fs/cgroup/pids/alys-test-docker; fi
	mkdir -p "$base/$id" || fail "cgroup created" "$base/$id"
	on_exit "rmdir $base/$id $base 2>/dev/null"
	CG=$base/$id CID=$id
}
# top_names PROFILE N: the N top rows of go tool pprof -top, by flat bytes
# (-nodefraction=0: pprof leaves out functions under 0.5% of the bytes)
top_names() {
	go tool pprof -top -nodecount="$2" -nodefraction=0 -sample_index=alloc_space "$1" 2>/dev/null |
		awk 'f { $1=$2=$3=$4=$5=""; sub(/^ +/, ""); print } /flat%/ { f = 1 }' | seen
}
# named_as_host WHAT PROFILE [N [NAMES]]: its top N (10) rows are names the
# host run's profile has (NAMES, $T/host.names), none [file+0x...]
named_as_host() {
	local n=${3:-10} host=${4:-$T/host.names} names bad
	names=$(top_names "$2" "$n")
	check_ge "$1: top rows listed" "$(grep -c . <<<"$names")" "$n"
	check_eq "$1: no [file+0x...] row in the top $n" "$(grep -c '+0x' <<<"$names")" 0
	bad=$(grep -vxF -f "$host" <<<"$names")
	check_eq "$1: the top $n named as on the host${bad:+ (not: $bad)}" "$(grep -c . <<<"$bad")" 0
}
load() { wrk -t1 -c4 -d"$2" "http://127.0.0.1:$1/" >/dev/null 2>&1; }
# trace_pid PID PORT NAME [OPTION...]: --pid -o $T/NAME.alys over 3 s of load
trace_pid() {
	"$BIN/alys-bpf" --pid "$1" -o "$T/$3.alys" "${@:4}" 2>"$T/$3.err" &
	local tp=$!
	on_exit "kill -INT $tp 2>/dev/null"
	wait_for_line "$T/$3.err" '^alys-bpf: tracing pid' 30 || fail "$3: attached" "$(cat "$T/$3.err")"
	load "$2" 3s
	kill -INT $tp
	wait $tp
	check_eq "$3: --pid -o: detached, exit 0" "$?" 0
}

# agent_both NAME WHAT AGENT...: the agent (AGENT --all ..., pushing to
# $T/rx-NAME) until it traces the container's server ($hp) and the host's,
# 5 s of load on both, then stopped (its status in AGENT_RC); what was
# pushed summed up for pushed(), the biggest profile of each server in
# $T/rx-NAME/best-c.pb.gz and best-h.pb.gz.
agent_both() {
	local name=$1 what=$2 ap lp
	shift 2
	"$@" --all --only-comm server --only-comm http_json \
		--push "http://127.0.0.1:$(cat "$T/rx-$name/port")/" --push-every 2 \
		2>"$T/$name-agent.err" &
	ap=$!
	on_exit "kill -INT $ap 2>/dev/null"
	wait_for_line "$T/$name-agent.err" "^alys-bpf: tracing pid $hp " 60 ||
		fail "$what: traces the container's server" "$(cat "$T/$name-agent.err")"
	wait_for_line "$T/$name-agent.err" "^alys-bpf: tracing pid $HOST_SERVER " 60 ||
		fail "$what: traces the host's server" "$(cat "$T/$name-agent.err")"
	load $port 5s &
	lp=$!
	load $HOST_PORT 5s
	wait $lp
	kill -INT $ap
	wait $ap
	AGENT_RC=$?
	"$ALYS_PYTHON" - "$T/rx-$name" "$hp" "$HOST_SERVER" "$CID" >"$T/$name-pushed" <<'PY'
import json, sys, shutil
d, cpid, hpid, cid = sys.argv[1:5]
rs = [json.loads(l) for l in open(d + "/index.jsonl")]
for k, pid in (("c", cpid), ("h", hpid)):
    mine = [r for r in rs if r["labels"].get("pid") == pid]
    print(k + "_n", len(mine))
    print(k + "_cid", int(all(r["labels"].get("container_id") == cid for r in mine)))
    print(k + "_cgroup", int(all(cid in r["labels"].get("cgroup", "") for r in mine)))
    print(k + "_ns", int(all(r["labels"].get("ns_pid") == "1" for r in mine)))
    print(k + "_none", int(not any(l in r["labels"] for r in mine
                                   for l in ("container_id", "cgroup", "ns_pid", "pod_uid"))))
    best = max(mine, key=lambda r: r["totals"].get("alloc_space", 0), default=None)
    if best:
        shutil.copy("%s/%d.pb.gz" % (d, best["n"]), "%s/best-%s.pb.gz" % (d, k))
PY
}
# pushed NAME KEY: a value agent_both summed up
pushed() { awk -v k="$2" '$1 == k { print $2 }' "$T/$1-pushed"; }

# --- the same program on the host: the names to expect --------------------
start_http_json "$T"
HOST_SERVER=$SERVER HOST_PORT=$PORT
trace_pid $HOST_SERVER $HOST_PORT host --sample all	# every site, the rare ones too
"$BIN/alys_converter" -q -f pprof -o "$T/host.pb.gz" "$T/host.alys"
top_names "$T/host.pb.gz" 1000 >"$T/host.names"
check_ge "host: names to compare with" "$(grep -c . "$T/host.names")" 20
check_eq "host: no file kept (its files are here by their paths)" "$(ls "$T/host.alys.debug" 2>/dev/null | wc -l)" 0

# --- servers in containers ---------------------------------------------------
for mode in pivot chroot; do
	R=$T/root-$mode
	copy_with_libs "$R" "$SRV" /app/server
	new_cgroup
	port=$((20000 + RANDOM % 20000))
	flag=; [ $mode = chroot ] && flag=--chroot
	"$T/container" $flag --cgroup "$CG" --pidfile "$T/$mode.pid" "$R" /app/server $port \
		>"$T/$mode.out" 2>&1 &
	cp=$!
	on_exit "kill $cp 2>/dev/null"
	wait_for_line "$T/$mode.out" '^listening' 30 || fail "$mode: server started" "$(cat "$T/$mode.out")"
	hp=$(cat "$T/$mode.pid")
	check_match "$mode: pid 1 inside, $hp on the host" "$(grep NSpid /proc/$hp/status)" "NSpid:\s+$hp\s+1$"
	load $port 1s

	# --http under wrk, read by go tool pprof
	"$BIN/alys-bpf" --pid $hp --http 127.0.0.1:0 2>"$T/$mode-http.err" &
	tp=$!
	on_exit "kill -INT $tp 2>/dev/null"
	wait_for_line "$T/$mode-http.err" 'serving the live profile at' 30 ||
		fail "$mode: --http serves" "$(cat "$T/$mode-http.err")"
	url=$(sed -n 's|^alys-bpf: serving the live profile at \(http://[0-9.:]*\)/.*|\1|p' "$T/$mode-http.err")
	load $port 5s &
	lp=$!
	sleep 0.5
	curl -sf -o "$T/$mode-http.pb.gz" "$url/debug/pprof/allocs?seconds=3"
	check_eq "$mode: --http: a profile" "$?" 0
	wait $lp
	kill -INT $tp
	wait $tp
	named_as_host "$mode: --http" "$T/$mode-http.pb.gz"
	check_eq "$mode: --http: no warning" "$(grep -c 'warning' "$T/$mode-http.err")" 0

	# --all --push, beside the host's server (in no container)
	start_receiver "$T/rx-$mode"
	agent_both $mode "$mode: --all" "$BIN/alys-bpf"
	check_ge "$mode: --all: profiles pushed for the container's server" "$(pushed $mode c_n)" 1
	check_eq "$mode: --all: labelled container_id" "$(pushed $mode c_cid)" 1
	check_eq "$mode: --all: labelled with its cgroup path" "$(pushed $mode c_cgroup)" 1
	check_eq "$mode: --all: labelled ns_pid 1" "$(pushed $mode c_ns)" 1
	check_ge "$mode: --all: profiles pushed for the host's server" "$(pushed $mode h_n)" 1
	check_eq "$mode: --all: the host's server: no container label" "$(pushed $mode h_none)" 1
	named_as_host "$mode: --all --push" "$T/rx-$mode/best-c.pb.gz"

	# --pid -o, then the container and its root removed
	trace_pid $hp $port $mode
	check_match "$mode: --pid -o: keeps the container's files" "$(cat "$T/$mode.err")" \
		"kept [0-9]+ mapped files .* in $T/$mode.alys.debug"
	# census and heap snapshot
	"$BIN/alys-bpf" --pid $hp --heap-snapshot -o "$T/$mode-heap.alys" 2>"$T/$mode-heap.err"
	check_eq "$mode: --heap-snapshot: exit 0" "$?" 0
	"$BIN/alys-bpf" --pid $hp --census -o "$T/$mode-census.alys" 2>"$T/$mode-census.err" &
	tp=$!
	on_exit "kill -INT $tp 2>/dev/null"
	wait_for_line "$T/$mode-census.err" '^alys-bpf: tracing pid' 30 ||
		fail "$mode: --census attached" "$(cat "$T/$mode-census.err")"
	load $port 2s
	kill -INT $tp
	wait $tp
	check_eq "$mode: --census: exit 0" "$?" 0
	kill $cp
	wait $cp 2>/dev/null
	rm -rf "$R"
	out=$(cd / && "$BIN/alys_converter" -q -f heap -o - "$T/$mode-heap.alys")
	# The buffer of Log's channel of (entry, backend), a nested generic
	# type named from the kept executable: its row is listed, with 160 KiB
	# of its own, whether the Channel retains it or a root word holds it
	# directly (then the Channel retains too little to be listed)
	check_match "$mode: heap snapshot, converted after: types named" "$out" \
		'^Deque\(Tuple\(Log::Entry, Log::Backend\+\)\) buffer '
	check_eq "$mode: heap snapshot, converted after: no [file+0x...]" "$(grep -c '+0x' <<<"$out")" 0
	out=$(cd / && "$BIN/alys_converter" -q -f census -o - "$T/$mode-census.alys")
	named=$(sed -n 's/.*allocation calls store a type id, \([0-9]*\) ids named.*/\1/p' <<<"$out")
	check_ge "$mode: census, converted after: type ids named from the kept executable" "${named:-0}" 50
	check_match "$mode: census, converted after: HTTP::Server counted" "$out" ' HTTP::Server +'
	(cd / && "$BIN/alys_converter" -f pprof -o "$T/$mode.pb.gz" "$T/$mode.alys" 2>"$T/$mode-conv.err")
	check_eq "$mode: converted after the container is gone: no warning" \
		"$(grep -c 'warning' "$T/$mode-conv.err")" 0
	named_as_host "$mode: --pid -o, converted after" "$T/$mode.pb.gz"
	"$BIN/alys_converter" -q -f report -o "$T/$mode.txt" "$T/$mode.alys"
	check_match "$mode: the report names the container" "$(cat "$T/$mode.txt")" \
		"Container: $CID, cgroup [^ ]*$CID, pid 1 in its pid namespace"
	"$BIN/alys_converter" -q -f json -o "$T/$mode.json" "$T/$mode.alys"
	check_eq "$mode: JSON header: container_id" "$(json_query "$T/$mode.json" "header['container_id']")" "$CID"
	check_eq "$mode: JSON header: ns_pid" "$(json_query "$T/$mode.json" "header['ns_pid']")" 1
	check_ge "$mode: GC pauses of the container's server" \
		"$(json_query "$T/$mode.json" "len(d['pauses'])")" 1
	check_eq "$mode: memory samples: its fibers listed, their stacks and its heap counted" \
		"$(json_query "$T/$mode.json" "int(bool(d['memory']) and all(m['fibers'] >= 2 and m['fiber_stacks'] > 0 and m['live'] > 0 and m['heap_resident'] >= m['live'] - 4096 for m in d['memory']))")" 1
	check_eq "$mode: memory samples: the parts add up to RSS within 5%" \
		"$(json_query "$T/$mode.json" "int(all(abs(m['heap_resident'] + m['fiber_stacks'] + m['malloc'] + m['anon'] + m['files'] - m['rss']) <= m['rss'] / 20 for m in d['memory']))")" 1
	mv "$T/$mode.alys" "$T/$mode-moved.alys"
	(cd / && "$BIN/alys_converter" -q -f report -o - "$T/$mode-moved.alys" 2>"$T/$mode-moved.err" >/dev/null)
	check_match "$mode: moved without its .debug: says where the files were looked for" \
		"$(cat "$T/$mode-moved.err")" "cannot open [^ ]*/app/server .*and no $mode-moved.alys.debug beside the trace"
done
check_eq "host: the report names no container" \
	"$("$BIN/alys_converter" -q -f report -o - "$T/host.alys" | grep -c '^ *Container:')" 0

# --- Debian 13's Crystal 1.14 and libgc 8.2.8 in a container -------------
# (tests/build-programs.sh builds sleeper-d13 in Debian 13's root file
# system; its loader and libraries are copied to the same paths inside)
D13=$ALYS_PROGS/sleeper-d13
[ -x "$D13" ] || fail "sleeper-d13 built" "no $D13 (tests/build-programs.sh)"
# the names to expect: the same program on the host, writing its heartbeat
# to a file as in the container, every allocation traced
"$D13" 0 - >"$T/d13-host.out" 2>&1 &
sp=$!
on_exit "kill $sp 2>/dev/null"
wait_for_line "$T/d13-host.out" '^READY' 30 || fail "d13: sleeper started on the host" ""
"$BIN/alys-bpf" --sample all --pid $sp -o "$T/d13-host.alys" 2>"$T/d13-host.err" &
tp=$!
on_exit "kill -INT $tp 2>/dev/null"
wait_for_line "$T/d13-host.err" '^alys-bpf: tracing pid' 30 || fail "d13: host run attached" ""
sleep 4
kill -INT $tp
wait $tp
kill $sp
"$BIN/alys_converter" -q -f pprof -o "$T/d13-host.pb.gz" "$T/d13-host.alys"
top_names "$T/d13-host.pb.gz" 1000 >"$T/d13-host.names"
R=$T/root-d13
copy_with_libs "$R" "$D13" /app/sleeper
"$T/container" --pidfile "$T/d13.pid" "$R" /app/sleeper 0 - >"$T/d13.out" 2>&1 &
cp=$!
on_exit "kill $cp 2>/dev/null"
wait_for_line "$T/d13.out" '^READY' 30 || fail "d13: sleeper started" "$(cat "$T/d13.out")"
hp=$(cat "$T/d13.pid")
"$BIN/alys-bpf" --pid $hp -o "$T/d13.alys" 2>"$T/d13.err" &
tp=$!
on_exit "kill -INT $tp 2>/dev/null"
wait_for_line "$T/d13.err" '^alys-bpf: tracing pid' 30 || fail "d13: attached" "$(cat "$T/d13.err")"
sleep 3
kill -INT $tp
wait $tp
check_eq "d13: --pid -o: exit 0" "$?" 0
check_eq "d13: no fallback notice" "$(grep -c 'notice:' "$T/d13.err")" 0
kill $cp
wait $cp 2>/dev/null
rm -rf "$R"
(cd / && "$BIN/alys_converter" -f pprof -o "$T/d13.pb.gz" "$T/d13.alys" 2>"$T/d13-conv.err")
check_eq "d13: converted after the container is gone: no warning" "$(grep -c warning "$T/d13-conv.err")" 0
named_as_host "d13: --pid -o, converted after" "$T/d13.pb.gz" 3 "$T/d13-host.names"
check_ge "d13: tick_alloc named" "$(pprof_query "$T/d13.pb.gz" 'sum(1 for l in locs.values() for f, _ in l if f[0] == "tick_alloc")')" 1

# --- a binary replaced on disk while it runs (a deploy) --------------------
mkdir -p "$T/deploy"
cp "$SRV" "$T/deploy/server"
port=$((20000 + RANDOM % 20000))
"$T/deploy/server" $port >"$T/deploy.out" 2>&1 &
dp=$!
on_exit "kill $dp 2>/dev/null"
wait_for_line "$T/deploy.out" '^listening' 30 || fail "deploy: server started" ""
cp "$ALYS_PROGS/sleeper" "$T/deploy/server.new"
mv "$T/deploy/server.new" "$T/deploy/server"	# the next build, as deploys rename it in
check_match "deploy: the running file is deleted" "$(grep -m1 /server /proc/$dp/maps)" '\(deleted\)$'
trace_pid $dp $port deploy
check_match "deploy: keeps the mapped file" "$(cat "$T/deploy.err")" "kept 1 mapped files"
"$BIN/alys_converter" -f pprof -o "$T/deploy.pb.gz" "$T/deploy.alys" 2>"$T/deploy-conv.err"
check_eq "deploy: no warning converting" "$(grep -c warning "$T/deploy-conv.err")" 0
named_as_host "deploy: --pid -o" "$T/deploy.pb.gz"
"$BIN/alys-bpf" --pid $dp --http 127.0.0.1:0 2>"$T/deploy-http.err" &
tp=$!
on_exit "kill -INT $tp 2>/dev/null"
wait_for_line "$T/deploy-http.err" 'serving the live profile at' 30 || fail "deploy: --http" ""
url=$(sed -n 's|^alys-bpf: serving the live profile at \(http://[0-9.:]*\)/.*|\1|p' "$T/deploy-http.err")
load $port 5s &
lp=$!
sleep 0.5
curl -sf -o "$T/deploy-http.pb.gz" "$url/debug/pprof/allocs?seconds=3"
wait $lp
kill -INT $tp
wait $tp
named_as_host "deploy: --http" "$T/deploy-http.pb.gz"
kill $dp

# --- the agent in a container: host pid namespace, /sys bound -------------
A=$T/agent-root
copy_with_libs "$A" "$BIN/alys-bpf" /alys/alys-bpf
copy_with_libs "$A" "$BIN/alys_converter" /alys/alys_converter
R=$T/root-ds
copy_with_libs "$R" "$SRV" /app/server
new_cgroup
port=$((20000 + RANDOM % 20000))
"$T/container" --cgroup "$CG" --pidfile "$T/ds.pid" "$R" /app/server $port >"$T/ds.out" 2>&1 &
cp=$!
on_exit "kill $cp 2>/dev/null"
wait_for_line "$T/ds.out" '^listening' 30 || fail "ds: server started" ""
hp=$(cat "$T/ds.pid")
start_receiver "$T/rx-ds"
agent_both ds "agent in a container" "$T/container" --host-pid --bind /sys sys "$A" /alys/alys-bpf
check_eq "agent in a container: exit 0" "$AGENT_RC" 0
check_ge "agent in a container: pushed the container's server" "$(pushed ds c_n)" 1
check_eq "agent in a container: labelled container_id" "$(pushed ds c_cid)" 1
check_ge "agent in a container: pushed the host's server" "$(pushed ds h_n)" 1
named_as_host "agent in a container: the container's server" "$T/rx-ds/best-c.pb.gz"
named_as_host "agent in a container: the host's server" "$T/rx-ds/best-h.pb.gz"

# --- launch mode inside a privileged container -----------------------------
copy_with_libs "$A" "$ALYS_PROGS/sample_sites" /app/sample_sites
"$T/container" --bind /sys sys "$A" /alys/alys-bpf -o /trace.alys -- /app/sample_sites proportions 8 \
	>"$T/launch.out" 2>"$T/launch.err"
check_eq "launch inside a container: exit 0" "$?" 0
"$T/container" "$A" /alys/alys_converter -q -f pprof -o /trace.pb.gz /trace.alys \
	2>"$T/launch-conv.err"
check_eq "launch inside a container: converted there" "$?" 0
check_eq "launch inside a container: every frame named" \
	"$(pprof_query "$A/trace.pb.gz" 'sum(1 for l in locs.values() for f, _ in l if "+0x" in f[0] and "sample_sites" in f[0])')" 0
check_ge "launch inside a container: names sample_sites' sites" \
	"$(pprof_query "$A/trace.pb.gz" 'sum(1 for l in locs.values() for f, _ in l if f[0].startswith("site_"))')" 1

check_all_pprof_valid "$T"
summary
