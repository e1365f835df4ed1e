#!/usr/bin/env bash
# tests/e2e/push_receiver.py, the backend the agent's e2e tests push to: it
# must refuse what Pyroscope and Parca refuse, with their status codes,
# codes and messages (as their code checks them: docs/DESIGN.md, "Pushes"), and
# record what they would store. Crafted bodies posted with curl: a good
# profile to each API, each API's wrong label shapes, Parca's id order and
# zero ids, the ingestion window (on a clock 2 h ahead too), a "-" in a
# sample type, 31 labels, an all-zero sample, a negative value, the rate
# limit's burst, --prefix, --ui, Pyroscope v1's server-side delta of alloc
# series (and __delta__=false), v2's label names.
# run-all-builds: bin
#   tests/unit/test_push_receiver.sh BINDIR   (BINDIR unused: no binary runs)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
make_tmpdir T
RXPY=$ALYS_ROOT/tests/e2e/push_receiver.py
for tool in curl protoc; do
	command -v $tool >/dev/null || { fail "$tool installed" "run scripts/setup-debian.sh"; summary; }
done

# encode NAME OUT [SED-SCRIPT]: pprof_fixtures/NAME.txtpb (edited by the sed
# script) encoded by protoc, gzipped.
encode() {
	grep -v '^#' "$HERE/pprof_fixtures/$1.txtpb" | sed "${3:-}" |
		protoc --encode=perftools.profiles.Profile -I "$PROTO_DIR" "$PROTO_DIR/profile.proto" |
		gzip >"$2"
}
# start_rx NAME [ARGS...]: a receiver writing to $T/NAME; its URL in URL_NAME.
start_rx() {
	local name=$1 pid
	shift
	mkdir -p "$T/$name"
	"$ALYS_PYTHON" "$RXPY" --out "$T/$name" --port-file "$T/$name/port" "$@" >"$T/$name/log" 2>&1 &
	pid=$!
	on_exit "kill $pid 2>/dev/null"
	wait_for_line "$T/$name/port" '^[0-9]+$' 10 || { fail "receiver $name started" "$(cat "$T/$name/log")"; summary; }
	printf -v "URL_$name" 'http://127.0.0.1:%s' "$(cat "$T/$name/port")"
}
# body API OUT PROFILE|- [NAME=VALUE...]: a push body, the labels as the API
# wants them (Pyroscope: a list; Parca: {"labels": [...]}).
body() {
	local api=$1 out=$2 prof=$3
	shift 3
	"$ALYS_PYTHON" - "$api" "$prof" "$@" >"$out" <<'PY'
import base64, json, sys
api, prof, labels = sys.argv[1], sys.argv[2], sys.argv[3:]
ls = [dict(zip(("name", "value"), l.split("=", 1))) for l in labels]
raw = "" if prof == "-" else base64.b64encode(open(prof, "rb").read()).decode()
s = {"labels": ls if api == "pyroscope" else {"labels": ls}, "samples": [{"ID": "x", "rawProfile": raw}]}
if api == "parca":
    del s["samples"][0]["ID"]
print(json.dumps({"series": [s]}, separators=(",", ":")))
PY
}
# post URL FILE [CURL-ARGS...]: ST the status, MSG the answer's message,
# CODE its code, CTYPE its Content-Type, the answer in $T/resp.
CT=application/json
post() {
	local url=$1 file=$2
	shift 2
	ST=$(curl -s -o "$T/resp" -D "$T/hdr" -w '%{http_code}' -H "Content-Type: $CT" "$@" \
		--data-binary @"$file" "$url")
	MSG=$("$ALYS_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("message", ""), end="")' \
		"$T/resp" 2>/dev/null)
	CODE=$("$ALYS_PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("code", ""), end="")' \
		"$T/resp" 2>/dev/null)
	CTYPE=$(sed -n 's/^Content-Type: *\([^;\r]*\).*/\1/Ip' "$T/hdr" | tr -d '\r')
}
# last DIR EXPR: EXPR over the last record of DIR/index.jsonl (r), printed.
last() {
	"$ALYS_PYTHON" -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1] + "/index.jsonl")][-1]
print(eval(sys.argv[2]))' "$1" "$2"
}
records() { grep -c . "$1/index.jsonl" 2>/dev/null || echo 0; }

PY=/push.v1.PusherService/Push
PA=/api/profiles/writeraw
encode good_min "$T/good.pb.gz"
encode good_min "$T/good100.pb.gz" 's/value: 64/value: 100/'
encode zero_sample "$T/zero.pb.gz"
encode zero_sample "$T/neg.pb.gz" 's/value: 0/value: -5/'
encode sample_type_dash "$T/dash.pb.gz"
encode bad_location_order "$T/order.pb.gz"
encode bad_location_id0 "$T/id0.pb.gz"
NOW=$(date +%s%N)
encode good_min "$T/now.pb.gz" "\$a time_nanos: $NOW"
encode good_min "$T/old.pb.gz" "\$a time_nanos: $((NOW - 7200 * 1000000000))"
encode good_min "$T/dur.pb.gz" '$a duration_nanos: 5000000000'
head -c 2000 /dev/urandom | gzip >"$T/junk.pb.gz"
# 2.2 MB of one string: under the 4 MiB size limit, over the 2 MiB burst
"$ALYS_PYTHON" - "$T/good.pb.gz" "$T/big.pb.gz" <<'PY'
import gzip, sys
n = 2200000
v, l = bytearray(), n
while True:
    v.append(l & 0x7F | (0x80 if l >> 7 else 0)); l >>= 7
    if not l: break
open(sys.argv[2], "wb").write(gzip.compress(gzip.decompress(open(sys.argv[1], "rb").read()) +
                                            b"\x32" + bytes(v) + b"a" * n))
PY

start_rx rx
start_rx rx2 --pyroscope-version 2
start_rx ahead --clock-offset 7200
start_rx pre --prefix /pyro --ui
start_rx ui --ui
R=$URL_rx
SVC=(__name__=memory service_name=t)
NODELTA=(__name__=memory service_name=t __delta__=false)

# --- a good profile to each API ------------------------------------------
body pyroscope "$T/p-good.json" "$T/good.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-good.json"
check_eq "pyroscope: a good profile: 200" "$ST" 200
check_eq "pyroscope: ... answered {} as application/json" "$(cat "$T/resp") $CTYPE" "{} application/json"
check_eq "pyroscope: ... recorded, as sent (__delta__=false), without __delta__" \
	"$(last "$T/rx" 'r["api"], r["labels"], r["series"], r["stored"], r["totals"]')" \
	"('pyroscope', {'__name__': 'memory', 'service_name': 't'}, ['memory:alloc_space:bytes::'], {'memory:alloc_space:bytes::': True}, {'alloc_space': 64})"
check "pyroscope: ... its raw bytes in N.pb.gz" cmp -s "$T/good.pb.gz" "$T/rx/$(last "$T/rx" 'r["n"]').pb.gz"
check_match "pyroscope: ... time_nanos 0 stored as the server's now" "$(last "$T/rx" 'r["time_nanos"]')" '^[0-9]{19}$'
body parca "$T/c-good.json" "$T/good.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-good.json"
check_eq "parca: a good profile: 200" "$ST" 200
check_eq "parca: ... answered {} as application/json" "$(cat "$T/resp") $CTYPE" "{} application/json"
check_eq "parca: ... recorded: __name__ as the name, its series" \
	"$(last "$T/rx" 'r["api"], r["name"], r["labels"], r["series"], r["totals"], r["time_nanos"]')" \
	"('parca', 'memory', {'service_name': 't'}, ['memory:alloc_space:bytes::'], {'alloc_space': 64}, 0)"
body parca "$T/c-dur.json" "$T/dur.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-dur.json"
check_eq "parca: duration_nanos != 0: a :delta series" "$ST $(last "$T/rx" 'r["series"][0]')" \
	"200 memory:alloc_space:bytes:::delta"
CT=text/plain post "$R$PA" "$T/c-good.json"
check_eq "parca: any Content-Type is read as JSON" "$ST" 200
CT=text/plain post "$R$PY" "$T/p-good.json"
check_eq "pyroscope: Content-Type text/plain: 415" "$ST" 415
check_match "pyroscope: ... with Accept-Post" "$(cat "$T/hdr")" '^Accept-Post: .*application/json'
check_eq "pyroscope: GET: 405" "$(curl -s -o /dev/null -w '%{http_code}' "$R$PY")" 405
check_eq "parca: GET: 501, code 12" "$(curl -s -w ' %{http_code}' "$R$PA")" \
	'{"code":12,"message":"Method Not Allowed","details":[]} 501'

# --- wrong label shapes ---------------------------------------------------
post "$R$PY" "$T/c-good.json"
check_eq "pyroscope: Parca's nested labels: 400 invalid_argument" "$ST $CODE" "400 invalid_argument"
check_eq "pyroscope: ... protojson's message" "$MSG" \
	'unmarshal message: unmarshal into *pushv1.PushRequest: proto: syntax error (line 1:22): unexpected token {'
post "$R$PA" "$T/p-good.json"
check_eq "parca: Pyroscope's list of labels: 400 code 3" "$ST $CODE" "400 3"
check_eq "parca: ... protojson's message" "$MSG" 'proto: syntax error (line 1:22): unexpected token ['
check_eq "parca: ... the body as grpc-gateway writes it" "$(cat "$T/resp")" \
	'{"code":3,"message":"proto: syntax error (line 1:22): unexpected token [","details":[]}'
printf '{"series":[{"samples":[{"rawProfile":""}]}]}' >"$T/c-nolabels.json"
post "$R$PA" "$T/c-nolabels.json"
check_eq "parca: a series without a labels object: 500 code 13 (the real one crashes)" "$ST $CODE" "500 13"
printf '{"series":[{"labels":{},"samples":[]}]}' >"$T/c-empty.json"
post "$R$PA" "$T/c-empty.json"
check_eq "parca: labels {}: 400 missing __name__ label" "$ST $MSG" "400 missing __name__ label"
body parca "$T/c-dup.json" "$T/good.pb.gz" "${SVC[@]}" a=1 a=2
post "$R$PA" "$T/c-dup.json"
check_eq "parca: a label twice: 400" "$ST $MSG" "400 duplicate label name: a"
body pyroscope "$T/p-noname.json" "$T/good.pb.gz" service_name=t
post "$R$PY" "$T/p-noname.json"
check_eq "pyroscope: no __name__: 400, invalid metric name" "$ST $MSG" \
	"400 invalid labels '{service_name=\"t\"}' with error: invalid metric name"
body pyroscope "$T/p-nosvc.json" "$T/good.pb.gz" __name__=memory __delta__=false
post "$R$PY" "$T/p-nosvc.json"
check_eq "pyroscope: no service_name: taken, as unknown_service" \
	"$ST $(last "$T/rx" 'r["labels"]["service_name"]')" "200 unknown_service"
body pyroscope "$T/p-dash.json" "$T/good.pb.gz" "${NODELTA[@]}" k8s-pod=x
post "$R$PY" "$T/p-dash.json"
check_eq "pyroscope v1: a label name with -: 400" "$ST $MSG" \
	"400 invalid labels '{__delta__=\"false\", __name__=\"memory\", k8s-pod=\"x\", service_name=\"t\"}' with error: invalid label name 'k8s-pod'"
body pyroscope "$T/p-dot.json" "$T/good.pb.gz" "${NODELTA[@]}" k8s.pod=x
post "$R$PY" "$T/p-dot.json"
check_eq "pyroscope v1: a dot in a label name becomes _" "$ST $(last "$T/rx" '"k8s_pod" in r["labels"]')" "200 True"
post "$URL_rx2$PY" "$T/p-dot.json"
check_eq "pyroscope v2: a dot is kept" "$ST $(last "$T/rx2" '"k8s.pod" in r["labels"]')" "200 True"
body pyroscope "$T/p-clash.json" "$T/good.pb.gz" "${NODELTA[@]}" a.b=1 a_b=2
post "$R$PY" "$T/p-clash.json"
check_match "pyroscope v1: a_b and a.b with other values: 400" "$ST $MSG" \
	"^400 profile with labels '.*' has duplicate label name 'a_b' after label name sanitization from 'a.b'$"
printf '{"series":[{"labels":[{"name":"__name__","value":"memory"}],"samples":[{"rawProfile":"not*base64"}]}]}' \
	>"$T/p-b64.json"
post "$R$PY" "$T/p-b64.json"
check_eq "pyroscope: bad base64: 400" "$ST $MSG" \
	'400 unmarshal message: unmarshal into *pushv1.PushRequest: proto: (line 1:86): invalid value for bytes field rawProfile: "not*base64"'
printf '{"series":[]}' >"$T/p-none.json"
post "$R$PY" "$T/p-none.json"
check_eq "pyroscope: no series: 400" "$ST $MSG" "400 no profiles received"
body pyroscope "$T/p-junk.json" "$T/junk.pb.gz" "${SVC[@]}"
post "$R$PY" "$T/p-junk.json"
check_eq "pyroscope: a profile that does not parse: 500 unknown (not a validation error)" "$ST $CODE" "500 unknown"
body parca "$T/c-junk.json" "$T/junk.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-junk.json"
check_match "parca: ... 400 failed to parse profile" "$ST $MSG" '^400 failed to parse profile: '

# --- ids ------------------------------------------------------------------
body parca "$T/c-order.json" "$T/order.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-order.json"
check_eq "parca: location ids written 2, 1: 400" "$ST $MSG" "400 invalid profile: location id is not sequential"
body pyroscope "$T/p-order.json" "$T/order.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-order.json"
check_eq "pyroscope: ... taken" "$ST" 200
body parca "$T/c-id0.json" "$T/id0.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-id0.json"
check_eq "parca: a location id 0: 400" "$ST $MSG" "400 invalid profile: location id is not sequential"
body pyroscope "$T/p-id0.json" "$T/id0.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-id0.json"
check_eq "pyroscope: ... 400 location id is 0" "$ST $MSG" "400 location id is 0"

# --- time -----------------------------------------------------------------
body pyroscope "$T/p-old.json" "$T/old.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-old.json"
check_match "pyroscope: time_nanos 2 h old: 400, outside of the ingestion window" "$ST $MSG" \
	"^400 profile with labels '\{__delta__=\"false\", __name__=\"memory\", service_name=\"t\"\}' is outside of ingestion window \(profile timestamp: [0-9-]+ [0-9:.]+ \+0000 UTC, the ingestion window starts at .* and ends at .*\)$"
body parca "$T/c-old.json" "$T/old.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-old.json"
check_eq "parca: ... taken (no window)" "$ST" 200
body pyroscope "$T/p-now.json" "$T/now.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-now.json"
check_eq "pyroscope: stamped now: taken" "$ST" 200
post "$URL_ahead$PY" "$T/p-now.json"
check_match "pyroscope, its clock 2 h ahead (--clock-offset 7200): stamped now is too old" "$ST $MSG" \
	'^400 .* is outside of ingestion window'
post "$URL_ahead$PY" "$T/p-good.json"
check_eq "pyroscope, 2 h ahead: time_nanos 0 is the server's now: taken" "$ST" 200

# --- sample types, labels, samples ----------------------------------------
body pyroscope "$T/p-sdash.json" "$T/dash.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-sdash.json"
check_eq "pyroscope: a sample type with -: 400" "$ST $MSG" "400 sample type contains -"
body parca "$T/c-sdash.json" "$T/dash.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-sdash.json"
check_match "parca: ... 500 code 2, its profile type not a PromQL name" "$ST $CODE $MSG" \
	'^500 2 invalid profile type at row 0 \(memory:alloc-space:bytes::\): '
many=("${NODELTA[@]}")
for i in $(seq 28); do many+=("l$i=v"); done
body pyroscope "$T/p-31.json" "$T/good.pb.gz" "${many[@]}"
post "$R$PY" "$T/p-31.json"
check_match "pyroscope: 31 labels: 400" "$ST $MSG" "^400 profile series '\{.*\}' has 31 label names; limit 30$"
body pyroscope "$T/p-30.json" "$T/good.pb.gz" "${many[@]:0:30}"
post "$R$PY" "$T/p-30.json"
check_eq "pyroscope: 30 labels: taken" "$ST" 200
body parca "$T/c-31.json" "$T/good.pb.gz" "${many[@]}"
post "$R$PA" "$T/c-31.json"
check_eq "parca: 31 labels: taken (no limit)" "$ST" 200
body pyroscope "$T/p-zero.json" "$T/zero.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-zero.json"
check_eq "pyroscope: an all-zero sample: taken, dropped, counted" \
	"$ST $(last "$T/rx" 'r["dropped_samples"], r["totals"]')" "200 (1, {'alloc_space': 64})"
body parca "$T/c-zero.json" "$T/zero.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-zero.json"
check_eq "parca: ... taken, dropped, counted" \
	"$ST $(last "$T/rx" 'r["dropped_samples"], r["totals"]')" "200 (1, {'alloc_space': 64})"
body pyroscope "$T/p-neg.json" "$T/neg.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-neg.json"
check_eq "pyroscope: a negative value: the sample dropped" \
	"$ST $(last "$T/rx" 'r["dropped_samples"], r["totals"]')" "200 (1, {'alloc_space': 64})"
body parca "$T/c-neg.json" "$T/neg.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-neg.json"
check_eq "parca: ... kept, stored as sent" \
	"$ST $(last "$T/rx" 'r["dropped_samples"], r["totals"]')" "200 (0, {'alloc_space': 59})"
body pyroscope "$T/p-big.json" "$T/big.pb.gz" "${NODELTA[@]}"
post "$R$PY" "$T/p-big.json"
check_match "pyroscope: 2.2 MB uncompressed: 429, over the 2 MiB burst" "$ST $CODE $MSG" \
	'^429 resource_exhausted push rate limit \(4\.0 MiB\) exceeded while adding 2\.1 MiB$'
body parca "$T/c-big.json" "$T/big.pb.gz" "${SVC[@]}"
post "$R$PA" "$T/c-big.json"
check_eq "parca: ... taken" "$ST" 200

# --- v1's server-side delta -------------------------------------------------
body pyroscope "$T/p-d1.json" "$T/good.pb.gz" __name__=memory service_name=delta
body pyroscope "$T/p-d2.json" "$T/good100.pb.gz" __name__=memory service_name=delta
post "$R$PY" "$T/p-d1.json"
check_eq "pyroscope v1: an alloc series' first push (no __delta__=false): 200, not stored" \
	"$ST $(last "$T/rx" 'r["stored"], r["totals"]')" "200 ({'memory:alloc_space:bytes::': False}, {'alloc_space': 0})"
post "$R$PY" "$T/p-d2.json"
check_eq "pyroscope v1: its second: the difference stored (100 - 64)" \
	"$ST $(last "$T/rx" 'r["stored"], r["totals"]')" "200 ({'memory:alloc_space:bytes::': True}, {'alloc_space': 36})"
post "$R$PY" "$T/p-d1.json"
check_eq "pyroscope v1: a value going down: a new baseline, not stored" \
	"$ST $(last "$T/rx" 'r["totals"]["alloc_space"]')" "200 0"
body pyroscope "$T/p-n1.json" "$T/good.pb.gz" __name__=memory service_name=nodelta __delta__=false
body pyroscope "$T/p-n2.json" "$T/good100.pb.gz" __name__=memory service_name=nodelta __delta__=false
post "$R$PY" "$T/p-n1.json"
check_eq "pyroscope v1, __delta__=false: the first push stored as sent" \
	"$ST $(last "$T/rx" 'r["totals"]["alloc_space"]')" "200 64"
post "$R$PY" "$T/p-n2.json"
check_eq "pyroscope v1, __delta__=false: the second too" \
	"$ST $(last "$T/rx" 'r["totals"]["alloc_space"], "__delta__" in r["labels"]')" "200 (100, False)"
post "$URL_rx2$PY" "$T/p-d1.json"
check_eq "pyroscope v2: no server-side delta: the first push stored" \
	"$ST $(last "$T/rx2" 'r["totals"]["alloc_space"]')" "200 64"

# --- --prefix, --ui ---------------------------------------------------------
post "$URL_pre/pyro$PY" "$T/p-good.json"
check_eq "--prefix /pyro: PREFIX$PY" "$ST" 200
post "$URL_pre/pyro$PA" "$T/c-good.json"
check_eq "--prefix /pyro: PREFIX$PA" "$ST" 200
post "$URL_pre$PY" "$T/p-good.json"
check_eq "--prefix /pyro --ui: $PY, outside the prefix: Go's plain 404" "$ST $(cat "$T/resp")" \
	"404 404 page not found"
post "$URL_pre/pyro/profiles/writeraw" "$T/c-good.json"
check_eq "--prefix /pyro --ui: PREFIX/profiles/writeraw: the UI's page" "$ST $CTYPE" "200 text/html"
post "$URL_ui/profiles/writeraw" "$T/c-good.json"
check_eq "--ui: /profiles/writeraw (not under /api): 200 with the UI's HTML" "$ST $CTYPE" "200 text/html"
check_match "--ui: ... an HTML page" "$(cat "$T/resp")" '^<!DOCTYPE html>'
post "$URL_ui/api/profiles/nothing" "$T/c-good.json"
check_eq "--ui: a path under /api the gateway does not route: the UI's page too" "$ST $CTYPE" "200 text/html"
post "$URL_ui$PA" "$T/c-good.json"
check_eq "--ui: the API still answers" "$ST $(cat "$T/resp")" "200 {}"
post "$R/profiles/writeraw" "$T/c-good.json"
check_eq "without --ui: /profiles/writeraw: 404" "$ST" 404

# --- what was recorded --------------------------------------------------------
check_eq "requests.jsonl: each request, its status and message" \
	"$("$ALYS_PYTHON" -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
print(len(rs) >= 40, all({"path", "status", "text", "t"} <= set(r) for r in rs),
      any(r["text"] == "location id is 0" and r["status"] == 400 for r in rs))' "$T/rx/requests.jsonl")" \
	"True True True"
n=$(records "$T/rx")
check_eq "index.jsonl: one N.pb.gz a record" "$(ls "$T/rx"/*.pb.gz | wc -l)" "$n"
check_eq "index.jsonl: the keys the e2e tests read" "$("$ALYS_PYTHON" -c 'import json, sys
keys = {"n", "api", "labels", "t", "time_nanos", "duration_nanos", "period_type", "totals",
        "series", "stored", "dropped_samples"}
print(all(keys <= set(json.loads(l)) for l in open(sys.argv[1])))' "$T/rx/index.jsonl")" True
summary
