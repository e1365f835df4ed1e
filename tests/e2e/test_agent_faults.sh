#!/usr/bin/env bash
# test_agent_faults.sh: alys-bpf --all --push against what goes wrong
# (issue 22): usage errors; tests/e2e/push_receiver.py rejecting what the
# real servers reject; a backend that drops connections, answers 503 (with
# a queue small enough to drop), refuses with 400, or is slow. One program
# runs before the agent and one starts after it, so that both ways a
# session begins run here too. Against the sanitizers' build, the one that
# tells a fault path's memory errors: test_agent.sh, the minute-long run
# with the backend down, is the plain build's.
# run-all-builds: bin-san
# run-all-alone: the --all agent would trace the programs of a test beside it
#   tests/e2e/test_agent_faults.sh BINDIR
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib.sh"
. "$HERE/agent_lib.sh"
BIN=${1:?usage: test_agent_faults.sh BINDIR}
BIN=$(cd "$BIN" && pwd)
P=$ALYS_PROGS
require_root_bpf
make_tmpdir T
for tool in curl go protoc; do
	command -v $tool >/dev/null || fail "$tool installed" "run scripts/setup-debian.sh"
done

# --- usage ---------------------------------------------------------------
out=$("$BIN/alys-bpf" --all --pid 1 2>&1)
check_eq "--all with --pid: usage error" "$?" 2
check_match "--all with --pid: says why" "$out" 'does not take --pid'
out=$("$BIN/alys-bpf" --push http://127.0.0.1:1 --pid 1 2>&1)
check_eq "--push without --all: usage error" "$?" 2
out=$("$BIN/alys-bpf" --all --push ftp://x 2>&1)
check_eq "--push ftp://: refused" "$?" 1
check_match "--push ftp://: names the schemes" "$out" 'http:// or https://'
out=$("$BIN/alys-bpf" --all --push http://127.0.0.1:1 --push-token-file "$T/none" 2>&1)
check_match "--push-token-file missing: names the file" "$out" "$T/none: No such file"
out=$("$BIN/alys-bpf" --all --push http://127.0.0.1:1 --push-api zipkin 2>&1)
check_match "--push-api zipkin: names the APIs" "$out" 'pyroscope \(default\) or parca'
out=$("$BIN/alys-bpf" --all --push-every 5 2>&1)
check_eq "--push-every without --push: usage error" "$?" 2
check_match "--push-every without --push: says what it goes with" "$out" 'go with --push URL'

# --- the receiver: rejects what the servers reject -----------------------
# (each rule with its message: tests/unit/test_push_receiver.sh)
start_receiver "$T/rx0"
R0=http://127.0.0.1:$(cat "$T/rx0/port")
head -c 2000 /dev/urandom | gzip >"$T/junk.pb.gz"
post() {	# PATH BODY-FILE: the status
	curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary @"$2" "$R0$1"
}
# a profile stamped now (an older one is outside Pyroscope's window)
"$BIN/alys_converter" -q -f pprof -o "$T/old.pb.gz" "$ALYS_ROOT/tests/fuzz/corpus/real-sleeper-attach.alys" 2>/dev/null ||
	fail "a profile to send" "alys_converter failed"
gzip -dc "$T/old.pb.gz" | protoc --decode=perftools.profiles.Profile -I "$PROTO_DIR" \
	"$PROTO_DIR/profile.proto" | sed "s/^time_nanos: .*/time_nanos: $(date +%s%N)/" |
	protoc --encode=perftools.profiles.Profile -I "$PROTO_DIR" "$PROTO_DIR/profile.proto" |
	gzip >"$T/ok.pb.gz"
b64=$(base64 -w0 "$T/ok.pb.gz")
mk() { printf '{"series":[{"labels":[%s],"samples":[{"ID":"1","rawProfile":"%s"}]}]}' "$1" "$2" >"$3"; }
name='{"name":"__name__","value":"memory"}'
mk "$name,"'{"name":"service_name","value":"t"}' "$b64" "$T/ok.json"
mk '{"name":"service_name","value":"t"}' "$b64" "$T/noname.json"
mk "$name,"'{"name":"service_name","value":"t"}' "$(base64 -w0 "$T/old.pb.gz")" "$T/old.json"
mk "$name,"'{"name":"service_name","value":"t"}' "not*base64" "$T/b64.json"
mk "$name,"'{"name":"service_name","value":"t"}' "$(base64 -w0 "$T/junk.pb.gz")" "$T/junk.json"
check_eq "receiver: a good push is taken" "$(post /push.v1.PusherService/Push "$T/ok.json")" 200
check_eq "receiver: no __name__: 400" "$(post /push.v1.PusherService/Push "$T/noname.json")" 400
check_eq "receiver: a profile stamped days ago: 400 (outside the ingestion window)" \
	"$(post /push.v1.PusherService/Push "$T/old.json")" 400
check_eq "receiver: bad base64: 400" "$(post /push.v1.PusherService/Push "$T/b64.json")" 400
check_eq "receiver: a profile that does not parse: 500, as Pyroscope answers" \
	"$(post /push.v1.PusherService/Push "$T/junk.json")" 500
check_eq "receiver: Parca wants its nested labels: 400" \
	"$(post /api/profiles/writeraw "$T/ok.json")" 400
kill $RX

# --- faults: a server that drops connections, one that refuses ----------
"$P/sleeper" 0 /dev/null 500 >/dev/null &
F=$!
on_exit "kill $F 2>/dev/null"
# fault_run NAME [AGENT-OPTIONS... --] RECEIVER-ARGS...: the agent for a
# few windows against the receiver; its /metrics at the end in NAME.metrics,
# its exit status in FAULT_RC.
# FAULT_PATH: what --push's URL adds after the port (a path prefix).
fault_run() {
	local name=$1 opts=() m ag
	shift
	if [[ " $* " == *" -- "* ]]; then
		while [ "$1" != -- ]; do opts+=("$1"); shift; done
		shift
	fi
	start_receiver "$T/rx-$name" "$@"
	"$BIN/alys-bpf" --all --only-comm sleeper \
		--push "http://127.0.0.1:$(cat "$T/rx-$name/port")${FAULT_PATH:-}" \
		--push-every 1 --http 0 "${opts[@]}" 2>"$T/$name.err" &
	ag=$!
	wait_for_line "$T/$name.err" "^alys-bpf: tracing pid $F " 60 ||
		fail "$name: the agent traces the program" "$(cat "$T/$name.err")"
	m=$(metrics_url "$T/$name.err")
	sleep 5
	curl -s "$m" >"$T/$name.metrics"
	kill -INT $ag; wait $ag
	FAULT_RC=$?
	kill $RX
}
fm() { value_of "$2" <"$T/$1.metrics"; }
fault_run close --mode close
check_eq "server drops connections: agent exits 0" "$FAULT_RC" 0
check_ge "server drops connections: failed attempts counted" "$(fm close alys_push_failed_attempts_total)" 1
check_eq "server drops connections: nothing counted as sent" "$(fm close alys_push_sent_total)" 0
fault_run s503 --push-queue 2 -- --mode status:503
check_ge "server answers 503: retried (failed attempts)" "$(fm s503 alys_push_failed_attempts_total)" 2
check_eq "server answers 503: not counted as refused" "$(fm s503 alys_push_rejected_total)" 0
check_match "server answers 503: said with the status" "$(cat "$T/s503.err")" 'HTTP 503'
check_ge "server answers 503, queue of 2: the oldest dropped, counted" \
	"$(fm s503 alys_push_dropped_total)" 1
check_le "server answers 503, queue of 2: no more than 2 wait" "$(fm s503 alys_push_queued)" 2
fault_run s400 --mode status:400
check_ge "server answers 400: refused, counted, not retried" "$(fm s400 alys_push_rejected_total)" 2
check_eq "server answers 400: nothing queued" "$(fm s400 alys_push_queued)" 0
# Something else at the URL answering 200: never counted as sent.
for mode in html empty redirect; do
	fault_run $mode --push-api parca -- --mode $mode
	check_ge "a $mode answer: refused, counted" "$(fm $mode alys_push_rejected_total)" 2
	check_eq "a $mode answer: nothing counted as sent" "$(fm $mode alys_push_sent_total)" 0
done
check_match "an HTML page: says it is not the push API and what to check" "$(cat "$T/html.err")" \
	'HTTP 200 with an HTML page, not the push API.s answer: the URL reaches a web UI'
check_match "an empty 200: says so" "$(cat "$T/empty.err")" 'HTTP 200 with an empty answer'
check_match "a redirect: says where to" "$(cat "$T/redirect.err")" 'HTTP 302: redirected to http://[^ ]*/login'

# --- the servers' rules (push_receiver.py: as their code checks) ---------
# Both APIs, each behind a path prefix (a reverse proxy, Parca's
# --path-prefix): every push taken, nothing refused.
for api in pyroscope parca; do
	FAULT_PATH=/$api/ fault_run prefix-$api --push-api $api -- --prefix /$api
	check_ge "$api behind /$api/: profiles sent" "$(fm prefix-$api alys_push_sent_total)" 2
	check_eq "$api behind /$api/: none refused" "$(fm prefix-$api alys_push_rejected_total)" 0
	check_eq "$api behind /$api/: every request at the prefixed API path" \
		"$(grep -vc "\"path\": \"/$api/$( [ $api = parca ] && echo api/profiles/writeraw ||
			echo push.v1.PusherService/Push)\"" "$T/rx-prefix-$api/requests.jsonl")" 0
done
# what Parca stores: the allocations as a delta (a duration), what is in
# use without one (else it would be summed over time as a delta too)
check_eq "parca: profile types memory:alloc_*:delta and memory:inuse_* (no :delta)" \
	"$("$ALYS_PYTHON" - "$T/rx-prefix-parca/index.jsonl" <<'PY'
import json, sys
types = set()
for l in open(sys.argv[1]):
    types.update(json.loads(l)["series"])
print(" ".join(sorted(t for t in types if t.startswith("memory:"))))
PY
)" "memory:alloc_objects:count:space:bytes:delta memory:alloc_space:bytes:space:bytes:delta memory:inuse_objects:count:space:bytes memory:inuse_space:bytes:space:bytes"
# the collector's pauses over a window: a delta too, their own type
check_eq "parca: the pauses' profile types, gc_pauses:*:delta" \
	"$("$ALYS_PYTHON" - "$T/rx-prefix-parca/index.jsonl" <<'PY'
import json, sys
types = set()
for l in open(sys.argv[1]):
    types.update(json.loads(l)["series"])
print(" ".join(sorted(t for t in types if not t.startswith("memory:"))))
PY
)" "gc_pauses:gc_pause:nanoseconds:gc_pause:nanoseconds:delta gc_pauses:gc_pauses:count:gc_pause:nanoseconds:delta"
# The URL without its prefix, or pointing at a web UI: never "sent".
fault_run noprefix -- --prefix /pyroscope
check_ge "the API under a prefix the URL lacks: 404 refused, counted" \
	"$(fm noprefix alys_push_rejected_total)" 2
check_eq "... nothing counted as sent" "$(fm noprefix alys_push_sent_total)" 0
# (a Parca without a path prefix, the URL with one: its UI takes every
# path outside /api)
FAULT_PATH=/parca fault_run oldpath --push-api parca -- --ui
check_ge "Parca's web UI at the URL (200, HTML): refused, counted" \
	"$(fm oldpath alys_push_rejected_total)" 2
check_eq "... nothing counted as sent" "$(fm oldpath alys_push_sent_total)" 0
check_match "... says the URL reaches a web UI" "$(cat "$T/oldpath.err")" \
	'HTTP 200 with an HTML page, not the push API.s answer'
# A server whose clock is 2 h ahead: our profiles are "older than 1 h".
fault_run clock -- --clock-offset 7200
check_ge "a server 2 h ahead: refused, counted" "$(fm clock alys_push_rejected_total)" 2
check_eq "... nothing counted as sent" "$(fm clock alys_push_sent_total)" 0
check_match "... with the server's words and what to check" "$(cat "$T/clock.err")" \
	'outside of ingestion window.*check both are set'
# Windows queued past the servers' window (an hour, here 2 s) while the
# server fails: dropped unsent and counted, not retried forever.
ALYS_PUSH_MAX_AGE_S=2 fault_run expired -- --mode status:503
check_ge "windows older than the servers take: dropped, counted" \
	"$(fm expired alys_push_expired_total)" 1
check_match "... said" "$(cat "$T/expired.err")" 'profiles older than 2 s dropped unsent'
# A window with more stacks than a server takes (Pyroscope: 16000 samples;
# here 1, the sleeper allocates from 2 or 3): the heaviest would keep
# theirs, the others go as one "[other stacks]" sample, nothing lost.
ALYS_PUSH_MAX_SAMPLES=1 fault_run cut
check_ge "a window cut to 1 sample: sent" "$(fm cut alys_push_sent_total)" 2
check_ge "... counted" "$(fm cut alys_push_windows_cut_total)" 1
check_match "... said" "$(cat "$T/cut.err")" 'the smallest [0-9]+ went as one "\[other stacks\]" sample'
check_eq "... every profile one sample at most, and some [other stacks]" \
	"$(ALYS_ROOT=$ALYS_ROOT "$ALYS_PYTHON" - "$T/rx-cut" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["ALYS_ROOT"] + "/tests")
from pprof_text import decode
d, bad, cut = sys.argv[1], 0, 0
for l in open(d + "/index.jsonl"):
    p = decode(open("%s/%d.pb.gz" % (d, json.loads(l)["n"]), "rb").read())
    st = p["string_table"]
    names = {f["id"][0]: st[f["name"][0]] for f in p.get("function", [])}
    locs = {l["id"][0]: names[l["line"][0]["function_id"][0]] for l in p.get("location", [])}
    samples = p.get("sample", [])
    bad += len(samples) > 1
    cut += any(locs[s["location_id"][0]] == "[other stacks]" for s in samples)
print(bad, int(cut > 0))
PY
)" "0 1"
for d in prefix-pyroscope prefix-parca cut; do
	check_all_pprof_valid "$T/rx-$d"
done


# A slow server, and a program that starts after the agent (its exec seen).
start_receiver "$T/rx-slow" --mode slow:3
"$BIN/alys-bpf" --all --only-comm sleeper --push "http://127.0.0.1:$(cat "$T/rx-slow/port")" \
	--push-every 1 --http 0 2>"$T/slow.err" &
AG=$!
on_exit "kill -INT $AG 2>/dev/null"
wait_for_line "$T/slow.err" "^alys-bpf: tracing pid $F " 60 ||
	fail "slow: the agent traces the program" "$(cat "$T/slow.err")"
"$P/sleeper" 0 /dev/null 300 >/dev/null &
L=$!
on_exit "kill $L 2>/dev/null"
wait_for_line "$T/slow.err" "^alys-bpf: tracing pid $L " 30
check_eq "a program started after the agent is traced" "$?" 0
M=$(metrics_url "$T/slow.err")
sleep 5
curl -s "$M" >"$T/slow.metrics"
check_eq "two processes traced" "$(fm slow alys_agent_processes)" 2
# One libgc build, one configuration: the second session took a slot in
# the first one's BPF object rather than loading (and verifying) its own.
check_eq "two processes of one libgc: one BPF object (gc_refill programs)" \
	"$(bpf_programs_of $AG gc_refill)" 1
kill $L
for i in $(seq 50); do
	[ "$(curl -s "$M" | value_of alys_agent_processes)" = 1 ] && break
	sleep 0.2
done
check_eq "the later program's session ends when it exits" \
	"$(curl -s "$M" | value_of alys_agent_processes)" 1
# Its slot is free again: a third program takes it, traced as the others.
"$P/sleeper" 0 "$T/hbL2" 300 >/dev/null &
L2=$!
on_exit "kill $L2 2>/dev/null"
wait_for_line "$T/slow.err" "^alys-bpf: tracing pid $L2 " 30
check_eq "a program started in a freed slot is traced" "$?" 0
sleep 3
check_eq "the freed slot's program: still one BPF object" "$(bpf_programs_of $AG gc_refill)" 1
check_ge "the freed slot's program: its events read" \
	"$(curl -s "$M" | awk -v p="pid=\"$L2\"" 'index($0, "alys_events_total{" p) == 1 { s += $2 }
		END { print s + 0 }')" 1
kill $L2
kill -INT $AG; wait $AG
rc=$?
check_eq "slow server: agent exits 0" "$rc" 0
[ "$rc" = 0 ] || echo "note: slow server: the agent's last words: $(tail -n 30 "$T/slow.err")"
kill $RX
check_ge "slow server (3 s an answer): profiles still sent" "$(fm slow alys_push_sent_total)" 1
check_ge "slow server: tracing goes on (events read)" \
	"$(awk '/^alys_events_total\{/ { s += $2 } END { print s + 0 }' "$T/slow.metrics")" 1
kill $F 2>/dev/null
summary
