#!/usr/bin/env bash
# End-to-end: alys_converter's formats on traces of real Crystal programs
# (issue 4). pprof is decoded by an independent decoder (protoc with the
# profile.proto that Debian's golang-github-google-pprof-dev ships) and its
# totals must equal the JSON totals; folded and flamegraph totals too; the
# SVG must be valid XML; the report must find the known site and type;
# file:line of a known allocation site; an inlined Leaf.new in --release.
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
CONV=$BIN/alys_converter
require_root_bpf
make_tmpdir T
N=2000
for tool in protoc xmllint gzip go curl dot; do
	command -v $tool >/dev/null || fail "tool $tool" "missing: run scripts/setup-debian.sh"
done
[ -r "$PROTO_DIR/profile.proto" ] ||
	fail "profile.proto" "$PROTO_DIR/profile.proto missing: apt-get install golang-github-google-pprof-dev"

# totals FILE.json: "alloc_objects alloc_space inuse_objects inuse_space",
# computed from the JSON events as docs/FORMAT.md defines them.
totals_json() {
	"$ALYS_PYTHON" - "$1" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["events"]
def allocates(e):
    if e["kind"] in ("malloc", "malloc_atomic"):
        return True
    return e["kind"] == "realloc" and e["addr"] != "0x0" and e["size"] > 0
def objects(e):
    s, w = e["size"], e["weight"]
    return 1 if s == 0 or w <= s else (w + s // 2) // s
by_id = {e["id"]: e for e in ev}
live = {}
ao = asp = 0
for e in ev:
    releases = e["kind"] == "free" or (e["kind"] == "realloc" and not (e["addr"] == "0x0" and e["size"] > 0))
    if releases and e.get("prev_id") in live:
        del live[e["prev_id"]]
    if allocates(e):
        ao += objects(e); asp += e["weight"]
        live[e["id"]] = e
print(ao, asp, sum(objects(e) for e in live.values()), sum(e["weight"] for e in live.values()))
PY
}

# pprof_top FILE.pb.gz: the function go tool pprof -top lists first (what a
# user opening the profile sees first), without pprof's " (inline)" mark
pprof_top() {
	go tool pprof -top "$1" 2>/dev/null | seen |
		awk '/^ +flat +flat%/ { getline; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); sub(/ \(inline\)$/, ""); print; exit }'
}

# trace NAME PROG [ALYS-BPF OPTIONS]: trace PROG N into $T/NAME.alys
trace() {
	local name=$1 prog=$2
	shift 2
	local rc want=0
	"$BIN/alys-bpf" -q "$@" -o "$T/$name.alys" -- "$ALYS_PROGS/$prog" $N >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	case $prog in alloc_known*) want=3 ;; esac	# alloc_known exits 3
	check_eq "$name: traced ($prog $N)" "$rc" "$want"
}

trace cc callchain
trace ccr callchain-release
trace ak alloc_known
trace aks alloc_known --sample bytes:256

for name in cc ccr ak aks; do
	A=$T/$name.alys
	"$CONV" -q -f json -o "$T/$name.json" "$A"
	check_eq "$name: json" "$?" 0
	read -r ao as io is < <(totals_json "$T/$name.json")
	if [ $name = aks ]; then
		# an estimate from ~60 sampled Points (p = 1 - exp(-8/256)):
		# within a factor of 2 of the truth is > 5 standard errors
		check_ge "$name: estimated objects >= N/2" "$ao" $((N / 2))
		check_le "$name: estimated objects <= 2N" "$ao" $((2 * N))
	else
		check_ge "$name: json has at least the program's $N objects" "$ao" $N
	fi

	# pprof: the default name, decoded by protoc, totals equal
	"$CONV" -q -f pprof "$A"
	check_eq "$name: pprof written to $name.pb.gz" "$?:$([ -s "$T/$name.pb.gz" ] && echo y)" "0:y"
	check_eq "$name: pprof sample types" \
		"$(pprof_query "$T/$name.pb.gz" "' '.join(types)")" \
		"alloc_objects alloc_space inuse_objects inuse_space"
	check_eq "$name: pprof totals = json totals (alloc/inuse objects/space)" \
		"$(pprof_query "$T/$name.pb.gz" "' '.join(str(total(t)) for t in types)")" \
		"$ao $as $io $is"
	check_eq "$name: pprof mappings carry build ids and file names" \
		"$(pprof_query "$T/$name.pb.gz" "all(st[m['build_id'][0]] and st[m['filename'][0]].startswith('/') for m in p['mapping'])")" 1
	check_eq "$name: pprof stacks start at Crystal code, not in the allocator" \
		"$(pprof_query "$T/$name.pb.gz" "sum(1 for s in p['sample'] if any(f[2].startswith(('GC_', '*GC::', '__crystal_malloc')) for f, _ in locs[s['location_id'][0]][:1]) and any(f[2].startswith('*') and not f[2].startswith('*GC::') for i in s['location_id'] for f, _ in locs[i]))")" 0
	# names as Crystal prints them, symbols as the binary's: pprof shows a
	# name as given only when it differs from its system name
	check_eq "$name: pprof names Crystal methods by the display rule, symbols as system names" \
		"$(pprof_query "$T/$name.pb.gz" "[f[0] for f in funcs.values() if f[2].startswith('*') and (f[0] == f[2] or f[0].startswith('*') or f[0].endswith(':'))]"):$(pprof_query "$T/$name.pb.gz" "sum(1 for f in funcs.values() if f[2].startswith('*'))" | grep -c '^[1-9]')" "[]:1"
	# what a user of go tool pprof sees first: a Crystal method
	top=$(pprof_top "$T/$name.pb.gz")
	check_match "$name: go tool pprof -top lists a Crystal method first ($top)" "$top" \
		'^[A-Z][^ *<]*[#.][a-z_][^ <]*$'
	check_eq "$name: ... and not the allocator's" "$(printf '%s' "$top" | grep -Ec '^(GC[.:]|Pointer(\(.*\))?(\.malloc|#realloc))')" 0
	# JSON: each stack once, so events stay small (a sampled trace has too
	# few events for its fixed part, header and stacks, to be spread over)
	if [ $name != aks ]; then
		bpe=$(($(stat -c %s "$T/$name.json") / $(json_query "$T/$name.json" "len(events)")))
		check_le "$name: json at most 250 bytes per event ($bpe)" "$bpe" 250
	fi

	# folded stacks: bytes (the default, as pprof) and objects
	"$CONV" -q -f folded-stacks -o "$T/$name.bytes.folded" "$A"
	check_eq "$name: folded bytes total (the default) = json" "$(awk '{ s += $NF } END { print s }' "$T/$name.bytes.folded")" "$as"
	"$CONV" -q -f folded-stacks --value objects -o "$T/$name.folded" "$A"
	check_eq "$name: folded --value objects total = json" "$(awk '{ s += $NF } END { print s }' "$T/$name.folded")" "$ao"

	# flamegraph: valid XML, the root frame holds the total
	"$CONV" -q -f flamegraph "$A"
	check "$name: flamegraph $name.svg is valid XML" xmllint --noout "$T/$name.svg"
	check_match "$name: flamegraph root is the total, in bytes" \
		"$(grep -o '<title>all ([0-9]* bytes' "$T/$name.svg")" "^<title>all \\($as bytes$"
	"$CONV" -q -f flamegraph --value objects -o "$T/$name.objects.svg" "$A"
	check_match "$name: flamegraph --value objects: the root is the objects" \
		"$(grep -o '<title>all ([0-9]* objects' "$T/$name.objects.svg")" "^<title>all \\($ao objects$"
done

# --- one model: every output attributes the same bytes to the same sites ---
for name in cc ak; do
	A=$T/$name.alys
	"$CONV" -q -f report -o "$T/$name.report.txt" "$A"
	"$CONV" -q -f leaks -o "$T/$name.leaks.txt" "$A"
	check_eq "$name: the report prints each table once" \
		"$(grep -E '^[A-Z][A-Za-z ,]+$' "$T/$name.report.txt" | sort | uniq -d | tr '\n' '|')" ""
	# per site, allocated bytes: report (top sites by bytes) and leaks (in
	# use at the end, whose alloc_bytes column covers the same events)
	check_eq "$name: report and leaks give every site they both list the same bytes" \
		"$("$ALYS_PYTHON" - "$T/$name.report.txt" "$T/$name.leaks.txt" <<'PY'
import sys
def table(path, title, cols, col):
    rows, on = {}, False
    for l in open(path):
        l = l.rstrip("\n")
        if l.startswith(title):
            on = True
        elif on and not l.strip():
            if rows:
                break
        elif on and l.strip()[:1].isdigit():
            f = l.split(None, cols)
            rows[f[cols]] = int(f[col])
    return rows
rep = table(sys.argv[1], "Top allocation sites by bytes", 6, 1)
lk = table(sys.argv[2], "In use at the end, by site", 5, 2)
both = set(rep) & set(lk)
bad = [(k, rep[k], lk[k]) for k in both if rep[k] != lk[k]]
print(len(both) >= 3 and not bad, bad[:3] if bad else "")
PY
)" "True "
done
# the chain_c site: the same bytes in the report, leaks, pprof, folded, JSON
site_bytes() { awk -v col="$2" '/chain_c/ { s += $col } END { print s + 0 }' "$1"; }
cbytes=$(sed -n '/^Top allocation sites by bytes/,/^$/p' "$T/cc.report.txt" | site_bytes /dev/stdin 2)
check_ge "cc: the report's chain_c site allocated bytes" "$cbytes" $((N * 40))
check_eq "cc: leaks, same bytes at chain_c" \
	"$(sed -n '/^In use at the end, by site/,/^$/p' "$T/cc.leaks.txt" | site_bytes /dev/stdin 3)" "$cbytes"
check_eq "cc: folded --value bytes, same bytes under chain_c" \
	"$(grep chain_c "$T/cc.bytes.folded" | awk '{ s += $NF } END { print s }')" "$cbytes"
check_eq "cc: JSON, same bytes under chain_c" \
	"$(json_query "$T/cc.json" "sum(e['weight'] for e in events if e['kind'] != 'free' and in_stack(e, 'chain_c'))")" "$cbytes"
check_eq "cc: pprof, same bytes under chain_c" \
	"$(pprof_query "$T/cc.pb.gz" "sum(s['value'][1] for s in p['sample'] if any('chain_c' in f[0] for i in s['location_id'] for f, _ in locs[i]))")" "$cbytes"

# --- Crystal names in the viewers users open: go tool pprof, speedscope ------
# The demo program: its stacks are deep and its names long. What go tool
# pprof -top lists, what speedscope's Sandwich view puts on top by self
# value, and what the flamegraph draws with most self width must be
# Crystal methods as the display rule names them, never GC_*.
"$BIN/alys-bpf" -q -o "$T/demo.alys" -- "$ALYS_PROGS/demo" 2000 >/dev/null
"$CONV" -q -f pprof -o "$T/demo.pb.gz" "$T/demo.alys"
"$CONV" -q -f folded-stacks -o "$T/demo.folded" "$T/demo.alys"
"$CONV" -q -f flamegraph -o "$T/demo.svg" "$T/demo.alys"
CRYSTAL_NAME='(?!GC_|GC[.]|__crystal_malloc|Pointer\(.*\)[.]malloc)[A-Za-z_][^*<>]*[^:*<>]'
top_rows=$(go tool pprof -top "$T/demo.pb.gz" 2>/dev/null | seen | awk '/^ +flat +flat%/ { on = 1; next } on { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }')
check_eq "demo: go tool pprof -top: no row starts with '*' or ends in ':' / ':Pointer'" \
	"$(printf '%s\n' "$top_rows" | grep -c '^[*]\|:$\|:Pointer$')" 0
check_match "demo: go tool pprof -top: Array instantiations apart (Array(Item), Array(JSON::Builder::ArrayState | …))" \
	"$(printf '%s\n' "$top_rows" | grep -c '^Array(Item)#\|^Array(JSON::Builder::ArrayState | …)#')" '^([2-9]|[1-9][0-9]+)$'
check_eq "demo: go tool pprof -top -sample_index=inuse_space: no row starts with '*' or ends in ':'" \
	"$(go tool pprof -top -sample_index=inuse_space "$T/demo.pb.gz" 2>/dev/null | seen | awk '/^ +flat +flat%/ { on = 1; next } on { print $NF }' | grep -c '^[*]\|:$')" 0
check_match "demo: go tool pprof -raw shows the symbols as system names" \
	"$(go tool pprof -raw "$T/demo.pb.gz" 2>/dev/null | seen | grep -c ' String::Builder#resize_to_capacity .* s=0([*]String::Builder#resize_to_capacity<Int32>:Pointer(UInt8))$')" '^[1-9]'
# the demo's report names the type of almost every allocation: String
# bytes from String and String::Builder methods, Item from
# Item.new_from_json_pull_parser (issue 20: was 34.6% unnamed)
"$CONV" -q -f report -o "$T/demo.txt" "$T/demo.alys"
check_match "demo: report: (no constructor frame) under 5% of the objects" \
	"$(sed -n '/^Allocations by type/,/^$/p' "$T/demo.txt" | awk '/^\(no constructor frame\)/ { p = $4 } END { sub(/%/, "", p); print (p + 0 < 5) ":" p + 0 }')" '^1:'
check_match "demo: report: String is the type with most objects" \
	"$(sed -n '/^Allocations by type/,/^$/p' "$T/demo.txt" | sed -n 4p)" '^String +[0-9]+ '
# short-lived allocations: the demo's byte slices are parsing temporaries
check_match "demo: report: most of String#byte_slice?'s objects are short-lived" \
	"$(sed -n '/^Short-lived/,/^$/p' "$T/demo.txt" | awk '/String#byte_slice\?/ { sub(/%/, "", $4); print ($4 > 50) ":" $4 }')" '^1:'
# go tool pprof -http, as a user opens it: its graph page (graphviz's dot,
# installed by setup) and its top table, fetched with curl
port=$((20000 + RANDOM % 20000))
go tool pprof -http="127.0.0.1:$port" -no_browser "$T/demo.pb.gz" >"$T/pprof-http.log" 2>&1 &
pprof_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/ui/" && break; sleep 0.2; done
curl -s "http://127.0.0.1:$port/ui/" >"$T/pprof-graph.html"
curl -s "http://127.0.0.1:$port/ui/top" >"$T/pprof-top.html"
kill "$pprof_pid" 2>/dev/null
wait "$pprof_pid" 2>/dev/null
check_match "demo: go tool pprof -http: the graph page draws (dot ran) with the top function" \
	"$(grep -c '<svg' "$T/pprof-graph.html"):$(grep -c 'Builder#resize_to_capacity' "$T/pprof-graph.html")" '^[1-9][0-9]*:[1-9]'
check_match "demo: go tool pprof -http: its top table lists Array(Item) methods apart" \
	"$(grep -o 'Array(Item)#[a-z_?]*' "$T/pprof-top.html" | sort -u | wc -l)" '^([2-9]|[1-9][0-9]+)$'
# the graph draws a name whole, on one line: pprof cuts C++-like names at
# '::' (JSON::Lexer::StringBased#initialize was drawn "Lexer::StringBased",
# like its three neighbours), Java-like ones before '(' (Item.new(String, ...)
# lost its argument types), then breaks lines at every '::' and '.'
graph_texts=$(grep -o '<text [^>]*>[^<]*</text>' "$T/pprof-graph.html" | sed 's/<[^>]*>//g' | seen)
check_match "demo: go tool pprof -http: the graph draws String::Builder#resize_to_capacity on one line" \
	"$(printf '%s\n' "$graph_texts" | grep -c '^String::Builder#resize_to_capacity$')" '^1$'
check_match "demo: go tool pprof -http: the graph's JSON::Lexer::StringBased methods keep their names, all different" \
	"$(printf '%s\n' "$graph_texts" | grep '^JSON::Lexer::StringBased[#.]' | sort | uniq -d | wc -l):$(printf '%s\n' "$graph_texts" | grep -c '^JSON::Lexer::StringBased[#.]')" '^0:([2-9]|[1-9][0-9]+)$'
check_eq "demo: go tool pprof -http: no graph line is a cut name (JSON, Builder#..., Lexer::StringBased alone)" \
	"$(printf '%s\n' "$graph_texts" | grep -c '^JSON$\|^Builder#\|^Lexer::StringBased$\|^new\b')" 0
check_eq "demo: pprof names hold no '::' or '.' for pprof to cut at" \
	"$(pprof_query "$T/demo.pb.gz" "sorted(f[3] for f in funcs.values() if '::' in f[3] or '.' in f[3])[:3]")" "[]"
check_match "demo: go tool pprof -focus with the separators written as '.' (the profile's comment says so)" \
	"$(go tool pprof -top -focus='String:.:Builder.new' "$T/demo.pb.gz" 2>/dev/null | seen | grep -c ' String::Builder.new')" '^[1-9]'
# the folded file's leaf with most bytes, and its bytes as speedscope prints them
read -r want_bytes want_name < <(awk '{ v = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); s[f[n]] += v }
	END { for (k in s) print s[k], k }' "$T/demo.folded" | sort -rn | head -1)
check_match "demo: the top self frame by bytes is a Crystal method ($want_name)" \
	"$(printf '%s' "$want_name" | grep -Pc "^$CRYSTAL_NAME\$")" '^1$'
if browsers_for "$BIN"; then
	"$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/speedscope_in_browser.py" "$ALYS_WEB_TOOLS/node_modules/speedscope/dist/release" \
		"$CRYSTAL_NAME" "$T/demo.pb.gz" "$(pprof_top "$T/demo.pb.gz")" \
		"$T/demo.folded" "$want_name	$(printf '%s' "$want_bytes" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" >"$T/speedscope.out" 2>&1
	check_eq "speedscope in chromium: the browser ran" "$?:$(grep -c '^ok' "$T/speedscope.out")" "0:8"
	browser_checks speedscope "$T/speedscope.out"
fi
"$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/flame_self.py" "$T/demo.svg" 10 >"$T/demo.svg.self"
check_eq "demo: flamegraph: the frame with most self width is $want_name" \
	"$(head -1 "$T/demo.svg.self" | cut -f2)" "$want_name"
check_eq "demo: flamegraph: its 10 frames with most self width are Crystal methods by the display rule" \
	"$(cut -f2 "$T/demo.svg.self" | grep -Pc "^$CRYSTAL_NAME\$")" 10
check_match "demo: flamegraph: title and tooltips in bytes" \
	"$(grep -c '>[0-9]* bytes allocated<' "$T/demo.svg"):$(grep -c '<title>[^<]* bytes, [0-9.]*%)</title>' "$T/demo.svg")" '^1:[1-9][0-9]*$'

# --- the flamegraph in a browser: renders, click to zoom, search ------------
# many_stacks paths 300: branches of ~1/4 each level, a frame to zoom into
"$BIN/alys-bpf" -q -o "$T/branches.alys" -- "$ALYS_PROGS/many_stacks" paths 300 "$T/branches.truth" >/dev/null
"$CONV" -q -f flamegraph -o "$T/branches.svg" "$T/branches.alys"
if browsers_for "$BIN"; then
	"$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/svg_in_browser.py" flamegraph "$T/branches.svg" \
		'd2 (' '^d1$' "$T/branches.png" >"$T/browser.out" 2>&1
	check_eq "flamegraph in chromium: the browser ran" "$?:$(grep -c '^ok' "$T/browser.out")" "0:11"
	browser_checks flamegraph "$T/browser.out"
fi

# --- weighting: a sampled trace is scaled up by each event's weight --------
check_match "sampled: fewer events recorded than allocations estimated" \
	"$(json_query "$T/aks.json" "len([e for e in events if e['kind'] != 'free']) < sum(e['weight'] for e in events if e['kind'] != 'free') // 8")" '^1$'

# --- the allocating method, its file and line --------------------------------
line=$(grep -n '^    points << Point.new(i)$' "$ALYS_ROOT/tests/programs/alloc_known.cr" | cut -d: -f1)
check_eq "ak: json frame of make_points is alloc_known.cr:$line for all $N points" \
	"$(json_query "$T/ak.json" "sum(1 for e in select(kind='malloc_atomic', size=8) for f in e['stack'] if 'make_points' in f['name'] and f.get('file', '').endswith('/alloc_known.cr') and f.get('line') == $line)")" $N
check_match "ak: pprof has make_points at alloc_known.cr:$line" \
	"$(pprof_query "$T/ak.pb.gz" "lines_of('make_points')")" "alloc_known.cr', $line\\)"
check_match "ak: flamegraph names make_points" "$(grep -c 'make_points' "$T/ak.svg")" '^[1-9]'

# --- inlined frames in the --release build ------------------------------------
cline=$(grep -n '^    leaves << Leaf.new(i.to_i64)$' "$ALYS_ROOT/tests/programs/callchain.cr" | cut -d: -f1)
check_eq "ccr: every Leaf allocation shows the inlined Leaf.new right above chain_c" \
	"$(json_query "$T/ccr.json" "sum(1 for e in select(kind='malloc_atomic', size=40) if any(a['name'] == 'Leaf.new' and a.get('symbol') == '*Leaf::new' and a.get('inlined') and 'chain_c' in b['name'] and a['ip'] == b['ip'] and b.get('line') == $cline for a, b in zip(e['stack'], e['stack'][1:])))")" $N
check_eq "ccr: pprof location carries Leaf.new as an inlined Line" \
	"$(pprof_query "$T/ccr.pb.gz" "multi_line_with('Leaf.new')")" 1
check_match "ccr: folded stack has chain_c;Leaf.new, the allocator's frames trimmed" \
	"$(grep -c '[;]chain_c;Leaf.new [0-9]*$' "$T/ccr.folded")" '^[1-9]'
check_eq "ccr: no allocator frame in folded stacks" "$(grep -c 'GC_\|GC[.]\|__crystal_malloc' "$T/ccr.folded")" 0
# names read from the source do not depend on the converter's working
# directory (DWARF names the files absolutely here; procs, named by
# relative paths, are checked in test_heap)
check_eq "ccr: folded stacks converted in / are the same" \
	"$(cd / && "$CONV" -q -f folded-stacks -o - "$T/ccr.alys" | cmp - "$T/ccr.bytes.folded" && echo same)" same
"$CONV" -q -f folded-stacks --keep-allocator-frames -o "$T/ccr.all.folded" "$T/ccr.alys"
check_match "ccr: --keep-allocator-frames keeps them" \
	"$(grep -c ';chain_c;Leaf.new;__crystal_malloc_atomic64;GC.malloc_atomic;GC_malloc_atomic [0-9]*$' "$T/ccr.all.folded")" '^[1-9]'
check_eq "cc: debug build needs no inlining: Leaf.new is a real frame" \
	"$(json_query "$T/cc.json" "sum(1 for e in select(kind='malloc_atomic', size=40) if any(f['name'] == 'Leaf.new' and f['symbol'] == '*Leaf::new<Int64>:Leaf' and not f.get('inlined') for f in e['stack']))")" $N

# --- report -------------------------------------------------------------------
for name in cc ccr; do
	"$CONV" -q -f report "$T/$name.alys"
	check_eq "$name: report written to $name.txt" "$?" 0
	check_match "$name: report's top site by count is chain_c at callchain.cr:$cline" \
		"$(sed -n '/^Top allocation sites by count/,/^$/p' "$T/$name.txt" | sed -n 4p)" \
		"^ +1 +$((N * 40)) .* $N .*chain_c.*callchain.cr:$cline$"
	check_match "$name: report's types: Leaf, $N objects, $((N * 40)) bytes" \
		"$(grep '^Leaf ' "$T/$name.txt")" "^Leaf +$N +[0-9.]+% +$((N * 40)) "
done
"$CONV" -q -f report --markdown "$T/ccr.alys"
check_match "report --markdown: ccr.md has a Leaf row" \
	"$(grep '^| Leaf |' "$T/ccr.md")" "^\\| Leaf \\| $N \\| "
"$CONV" -q -f report --type Leaf -o "$T/leaf.txt" "$T/ccr.alys"
check_match "report --type Leaf: only Leaf, with its call stacks" \
	"$(grep -E '^  Allocated:|^Top call stacks of Leaf|^#1 ' "$T/leaf.txt" | tr '\n' '|')" \
	"Allocated: $N objects, $((N * 40)) bytes.*Top call stacks of Leaf\\|#1  $((N * 40)) bytes, $N objects"
"$CONV" -q -f pprof --keep-allocator-frames -o "$T/keep.pb.gz" "$T/ak.alys"
check_match "pprof --keep-allocator-frames: go tool pprof -top lists the GC function first" \
	"$(pprof_top "$T/keep.pb.gz")" '^GC_malloc'
check_eq "pprof --keep-allocator-frames: same totals" \
	"$(pprof_query "$T/keep.pb.gz" "' '.join(str(total(t)) for t in types)")" \
	"$(pprof_query "$T/ak.pb.gz" "' '.join(str(total(t)) for t in types)")"
"$CONV" -q -f pprof --type Leaf -o "$T/leaf.pb.gz" "$T/ccr.alys"
check_eq "pprof --type Leaf: $N objects" "$(pprof_query "$T/leaf.pb.gz" "total('alloc_objects')")" $N

# --- filters --------------------------------------------------------------------
read -r ao as io is < <(totals_json "$T/cc.json")
mid=$(json_query "$T/cc.json" "sorted(e['time_ns'] for e in events)[len(events) // 2]")
"$CONV" -q -f folded-stacks --value objects --time "..${mid}ns" -o "$T/early.folded" "$T/cc.alys"
"$CONV" -q -f folded-stacks --value objects --time "$((mid + 1))ns.." -o "$T/late.folded" "$T/cc.alys"
check_eq "--time ..mid + mid+1.. adds up to the whole" \
	"$(cat "$T/early.folded" "$T/late.folded" | awk '{ s += $NF } END { print s }')" "$ao"
check_eq "--time ..mid: the allocations up to mid" \
	"$(awk '{ s += $NF } END { print s }' "$T/early.folded")" \
	"$(json_query "$T/cc.json" "sum(1 for e in events if e['kind'] != 'free' and e['time_ns'] <= $mid)")"
"$CONV" -q -f folded-stacks --value bytes --min-bytes $((N * 40)) -o "$T/big.folded" "$T/cc.alys"
check_eq "--min-bytes $((N * 40)): only the Leaf stack is left" \
	"$(awk '{ print $NF }' "$T/big.folded" | tr '\n' ' ')" "$((N * 40)) "
# a bound in ns past 10^10 (22 s): the same as in seconds
"$CONV" -q -f folded-stacks --value objects --time "..22464342052ns" -o "$T/ns.folded" "$T/cc.alys"
"$CONV" -q -f folded-stacks --value objects --time "..22.464342052s" -o "$T/s.folded" "$T/cc.alys"
check_eq "--time ..22464342052ns: as ..22.464342052s" "$(md5sum <"$T/ns.folded")" \
	"$(md5sum <"$T/s.folded")"
"$CONV" -q -f folded-stacks --time 2..1 "$T/cc.alys" 2>"$T/bad.err"
check_eq "--time 2..1 is rejected" "$?" 2
check_match "--time error names the expected form" "$(cat "$T/bad.err")" "expected FROM..TO"
"$CONV" -f json -o /dev/null "$T/cc.alys" 2>"$T/notes.err"
check_le "a stripped libgc is noted at most once" "$(grep -c 'stripped' "$T/notes.err")" 1
"$CONV" -q -f json -o /dev/null "$T/cc.alys" 2>"$T/quiet.err"
check_eq "-q silences notes" "$(wc -c <"$T/quiet.err")" 0
"$CONV" -q -f folded-stacks --value objects --no-symbols -o "$T/nosym.folded" "$T/cc.alys"
check_eq "--no-symbols: same total" "$(awk '{ s += $NF } END { print s }' "$T/nosym.folded")" "$ao"
check_match "--no-symbols: frames as [file+0xoffset]" "$(head -1 "$T/nosym.folded")" '^\[[^]]+\+0x[0-9a-f]+\]'

check_all_pprof_valid "$T"
summary
