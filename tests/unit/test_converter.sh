#!/usr/bin/env bash
# run-all-arg: alys_converter
# Unit tests for alys_converter: builds traces with test_converter_gen (a
# msgpack-c writer driven by a small script) whose stacks point into real ELF
# files compiled here, then checks the JSON and folded outputs and the
# reader's handling of cut, broken and hostile files.
#
#   tests/unit/test_converter.sh bin/alys_converter
#   tests/unit/test_converter.sh bin-san/alys_converter
set -uo pipefail

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 PATH/TO/alys_converter" >&2
	exit 2
fi
CONV=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# one directory per converter build so both can run at once
W=$ROOT/tests/build/converter-$(basename "$(dirname "$CONV")")
rm -rf "$W"
mkdir -p "$W"

# Sanitizer reports get their own exit codes, never 0/1/2 which the
# converter itself uses.
export ASAN_OPTIONS=exitcode=99:abort_on_error=0:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:exitcode=98:print_stacktrace=1
export LSAN_OPTIONS=exitcode=97

. "$ROOT/tests/lib.sh"
# on a failed check, show what the converter said
ALYS_FAIL_DETAIL=$W/err

# run ARGS...: run the converter, stdout to $W/out, stderr to $W/err, status in RC
run() {
	"$CONV" "$@" >"$W/out" 2>"$W/err"
	RC=$?
}
clean_run() { ! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$W/err" && [ "$RC" -lt 3 ]; }
err_has() { grep -qF -- "$1" "$W/err"; }
err_lines() { wc -l <"$W/err"; }

# ---- helpers: generator, test ELF files ----------------------------------
# the generator, built by the Makefile like the programs (ASan+UBSan for bin-san)
case "$(basename "$(dirname "$CONV")")" in
bin-san) san=1 build=build-san ;;
*) san=0 build=build ;;
esac
make -s -C "$ROOT" SAN=$san "$build/tests/test_converter_gen" || { echo "0 passed, 1 failed"; exit 1; }
cp "$ROOT/$build/tests/test_converter_gen" "$W/gen"

# docs/FORMAT.md spells every record as the one table has it (the writer,
# the reader and the generator all use that table)
format_doc_matches() {
	local doc sig missing=0
	doc=$(tr -s ' \n\t' '   ' <"$ROOT/docs/FORMAT.md")
	"$W/gen" -s >"$W/signatures" || return 1
	[ "$(wc -l <"$W/signatures")" -ge 12 ] || return 1
	while IFS= read -r sig; do
		case "$doc" in
		*"\`$sig\`"*) ;;
		*) echo "FORMAT.md lacks \`$sig\`" >>"$W/err"; missing=1 ;;
		esac
	done <"$W/signatures"
	return $missing
}
: >"$W/err"
check "FORMAT.md: every record's fields as the record table has them" format_doc_matches
gcc -g -O0 -fno-omit-frame-pointer -fPIE -pie -o "$W/prog" "$HERE/test_converter_prog.c"
gcc -g -O0 -fno-omit-frame-pointer -no-pie -o "$W/prog_nopie" "$HERE/test_converter_prog.c"
gcc -g -O0 -shared -fPIC -o "$W/libhelper.so" "$HERE/test_converter_lib.c"

sym_addr() { nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1; exit }'; }
sym_size() { nm -S "$1" | awk -v s="$2" '$4 == s { print "0x" $2; exit }'; }
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3; exit }'; }
# ip0 FILE BASE SYM: an address inside SYM (the probed function itself)
ip0() { printf '0x%x' $(($2 + $(sym_addr "$1" "$3") + 1)); }
# ret FILE BASE SYM: a return address in the middle of SYM
ret() { printf '0x%x' $(($2 + $(sym_addr "$1" "$3") + $(sym_size "$1" "$3") / 2)); }
# mapping FILE BASE [BUILDID]: the mapping record of FILE's executable segment
mapping() {
	local off vaddr memsz
	read -r off vaddr memsz < <(readelf -lW "$1" | awk '$1 == "LOAD" && / R E / { print $2, $3, $6; exit }')
	printf 'mapping 0x%x 0x%x 0x%x %s %s\n' \
		$(($2 + (vaddr & ~0xfff))) $((($2 + vaddr + memsz + 0xfff) & ~0xfff)) \
		$((off & ~0xfff)) "$1" "${3:-$(build_id "$1")}"
}

PIE=0x555555554000
LIB=0x7f1234560000
P=$W/prog
N=$W/prog_nopie
L=$W/libhelper.so
START=1000000000

header() { echo "header ${1:-alys-bpf} ${2:-1} 4242 $P $START"; }

# the complete trace: PIE, shared library, non-PIE, missing and no mapping
{
	header
	mapping "$P" $PIE
	mapping "$L" $LIB
	mapping "$N" 0
	echo "mapping 0x7f0000000000 0x7f0000010000 0x2000 /nonexistent/libgone.so -"
	echo "counters ringbuf_drop_event=0 stack_map_full=2"
	echo "stack 1 $(ip0 "$P" $PIE GC_malloc) $(ret "$P" $PIE make_widget) $(ret "$P" $PIE main)"
	echo "stack 2 $(ip0 "$P" $PIE GC_malloc_atomic) $(ret "$P" $PIE parse_line) $(ret "$L" $LIB lib_helper) $(ret "$P" $PIE main)"
	echo "event 1 $((START + 1000)) 100 100 0x10000 0 0 1 100 3"
	echo "event 2 $((START + 2000)) 100 200 0x20000 0 0 2 200 3"
	echo "stack 3 $(ip0 "$P" $PIE GC_realloc) $(ret "$P" $PIE grow_buffer) $(ret "$P" $PIE main)"
	echo "event 3 $((START + 3000)) 101 300 0x30000 0x10000 100 3 300 4"
	echo "stack 4 $(ip0 "$P" $PIE GC_free) $(ret "$P" $PIE main)"
	echo "event 4 $((START + 4000)) 101 0 0x20000 0 200 4 0 4"
	echo "future"
	echo "stack 5 $(ip0 "$P" $PIE GC_malloc) 0x7f0000001234 0xdeadbeef000"
	echo "event 1 $((START + 5000)) 102 50 0x50000 0 0 5 50 5"
	echo "event 1 $((START + 6000)) 102 60 0x60000 0 0 0 60 5"
	echo "stack 6 $(ip0 "$N" 0 GC_malloc) $(ret "$N" 0 make_widget) $(ret "$N" 0 main)"
	echo "event 1 $((START + 7000)) 103 70 0x70000 0 0 6 70 6"
	echo "event 2 $((START + 8000)) 100 80 0x80000 0 0 2 80 6"
	echo "counters ringbuf_drop_event=0 stack_map_full=5"
	echo "end exit 0 $((START + 9000)) 8"
} >"$W/full.script"
"$W/gen" -i "$W/full.index" <"$W/full.script" >"$W/full.alys"

# ---- complete trace -> JSON ------------------------------------------------
run --inline-stacks -o "$W/full.json" "$W/full.alys"
[ $RC -eq 0 ] && clean_run && [ "$(err_lines)" -eq 1 ] && err_has "/nonexistent/libgone.so"
check_status "complete trace converts to json, exit 0, no warnings but the missing file" $?

check_full_json() {
	python3 - "$W/full.json" "$P" "$L" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
prog, lib = sys.argv[2], sys.argv[3]
ev = doc["events"]
def eq(what, got, want):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")
eq("top keys (--inline-stacks)", sorted(doc), ["collections", "counters", "end", "events", "header", "heap_growths", "mappings", "memory", "pauses"])
eq("no pauses", doc["pauses"], [])
eq("no collections read", doc["collections"], [])
eq("no liveness mode", (doc["header"]["liveness"], doc["end"]["liveness"]), (None, None))
eq("header pid", doc["header"]["pid"], 4242)
eq("header version", doc["header"]["version"], 1)
eq("header exe", doc["header"]["exe"], prog)
eq("header argv", doc["header"]["argv"], [prog, "--test"])
eq("mappings", len(doc["mappings"]), 4)
eq("counters (last record wins)", doc["counters"], {"ringbuf_drop_event": 0, "stack_map_full": 5})
eq("end", doc["end"], {"reason": "exit", "exit_status": 0, "stop_ns": 1000009000, "events": 8, "liveness": None,
                       "file_bytes": None, "raw_bytes": None, "blocks": None})
eq("event count", len(ev), 8)
eq("ids", [e["id"] for e in ev], list(range(1, 9)))
eq("kinds", [e["kind"] for e in ev],
   ["malloc", "malloc_atomic", "realloc", "free", "malloc", "malloc", "malloc", "malloc_atomic"])
eq("sizes", [e["size"] for e in ev], [100, 200, 300, 0, 50, 60, 70, 80])
eq("time_ns", [e["time_ns"] for e in ev], [1000 * i for i in range(1, 9)])
eq("addr", ev[0]["addr"], "0x10000")
eq("tids", [e["tid"] for e in ev[:4]], [100, 100, 101, 101])
eq("gc_no", ev[2]["gc_no"], 4)
# realloc of event 1's block: old_size filled in from it
eq("realloc prev", (ev[2]["prev_addr"], ev[2]["prev_size"], ev[2]["prev_id"]), ("0x10000", 100, 1))
eq("free prev", (ev[3]["prev_addr"], ev[3]["prev_size"], ev[3]["prev_id"]), ("0x20000", 200, 2))
eq("malloc has no prev", "prev_id" in ev[0], False)
names = lambda e: [f["name"] for f in e["stack"]]
eq("stack 1", names(ev[0]), ["GC_malloc", "make_widget", "main"])
eq("stack 2 (shared library)", names(ev[1]), ["GC_malloc_atomic", "parse_line", "lib_helper", "main"])
eq("stack 3", names(ev[2]), ["GC_realloc", "grow_buffer", "main"])
eq("stack 4", names(ev[3]), ["GC_free", "main"])
eq("stack 5 (missing file, no mapping)", names(ev[4]), ["GC_malloc", "[libgone.so+0x3234]", "0xdeadbeef000"])
eq("lost stack", (ev[5]["stack_id"], ev[5]["stack"]), (0, []))
eq("stack 6 (non-PIE)", names(ev[6]), ["GC_malloc", "make_widget", "main"])
eq("stack ids", [e["stack_id"] for e in ev], [1, 2, 3, 4, 5, 0, 6, 2])
f = ev[0]["stack"][1]
if not f.get("file", "").endswith("test_converter_prog.c") or not f.get("line", 0) > 0:
    sys.exit(f"no file:line for make_widget: {f}")
if ev[1]["stack"][2].get("file", "").endswith("test_converter_lib.c") is False:
    sys.exit(f"no file for lib_helper: {ev[1]['stack'][2]}")
if not all(fr["ip"].startswith("0x") for e in ev for fr in e["stack"]):
    sys.exit("ip not hex")
PY
}
check "json: counts, kinds, sizes, prev links and names are right" check_full_json

# line of make_widget's call must be the GC_malloc line in the source
want_line=$(grep -n 'void \*p = GC_malloc(16' "$HERE/test_converter_prog.c" | cut -d: -f1)
check "json: return address resolves to the calling line" \
	python3 -c "import json,sys; f=json.load(open('$W/full.json'))['events'][0]['stack'][1]; sys.exit(f['line'] != $want_line)"

# the default layout: each stack once in a table, events refer to it by id
run -o "$W/full-table.json" "$W/full.alys"
check "json: the stacks table resolves to the stacks of --inline-stacks, each once" \
	python3 -c "
import json, sys
t, i = json.load(open('$W/full-table.json')), json.load(open('$W/full.json'))
table = {s['id']: s['frames'] for s in t['stacks']}
ids = [s['id'] for s in t['stacks']]
same = [table.get(e['stack_id'], []) for e in t['events']] == [e['stack'] for e in i['events']]
sys.exit(not (same and len(ids) == len(set(ids)) == 6 and all('stack' not in e for e in t['events'])))"

run -o "$W/full-indent.json" --inline-stacks --indent "$W/full.alys"
check "json --indent parses to the same document" \
	python3 -c "import json,sys; sys.exit(json.load(open('$W/full.json')) != json.load(open('$W/full-indent.json')))"

run -o - --inline-stacks --depth 2 "$W/full.alys"
check "json --depth 2 keeps the 2 innermost frames" \
	python3 -c "import json,sys; d=json.load(open('$W/out')); sys.exit(not all(len(e['stack'])<=2 for e in d['events']) or d['events'][0]['stack'][1]['name']!='make_widget')"

# ---- folded stacks -----------------------------------------------------------
run -f folded-stacks -o "$W/bytes.folded" "$W/full.alys"
[ $RC -eq 0 ] && clean_run
check_status "folded-stacks converts, exit 0" $?
# by default as pprof: bytes, stacks from the allocating code (a lost
# stack, nothing but the allocator's, stays whole)
! grep -q 'GC_malloc[^;]* ' "$W/bytes.folded" || grep -q '^\[stack lost\];GC_malloc ' "$W/bytes.folded"
check_status "folded: no allocator leaf by default but a lost stack's" $?
check "folded: bytes by default" grep -qxF "main;make_widget 170" "$W/bytes.folded"
run -f folded-stacks --keep-allocator-frames --value objects -o "$W/full.folded" "$W/full.alys"
check "folded --keep-allocator-frames --value objects: root-first lines ending in the GC function" \
	grep -qxF "main;make_widget;GC_malloc 2" "$W/full.folded"
grep -qxF "main;lib_helper;parse_line;GC_malloc_atomic 2" "$W/full.folded" && grep -qxF "[stack lost];GC_malloc 1" "$W/full.folded"
check_status "folded: shared library frame and lost stacks" $?
! grep -q GC_free "$W/full.folded"
check_status "folded: frees excluded" $?
totals_match() {
	python3 - "$W/full.json" "$W/full.folded" "$1" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["events"]
key = sys.argv[3]
want = sum(1 if key == "count" else e["weight"] for e in ev if e["kind"] != "free")
got = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
sys.exit(0 if got == want else f"folded total {got}, json total {want}")
PY
}
check "folded count total equals json allocation events" totals_match count
run -f folded-stacks --value bytes -o "$W/full.folded" "$W/full.alys"
check "folded --value bytes total equals json weights" totals_match bytes
cmp -s "$W/full.folded" "$W/bytes.folded"
check_status "folded: --value bytes is the default" $?
[ "$(cut -d" " -f1 "$W/full.folded" | sort | uniq -d | wc -l)" -eq 0 ]
check_status "folded: lines are unique" $?
run -f folded-stacks --depth 1 -o - "$W/full.alys"
[ $RC -eq 0 ] && ! grep -v "^\[stack lost\]" "$W/out" | grep -q ";"
check_status "folded --depth 1 leaves only GC functions" $?

# ---- default output names, CLI errors ---------------------------------------
cp "$W/full.alys" "$W/named.alys"
run "$W/named.alys"
[ $RC -eq 0 ] && [ -s "$W/named.json" ]
check_status "default output: trace.alys -> trace.json" $?
run -f folded-stacks "$W/named.alys"
[ $RC -eq 0 ] && [ -s "$W/named.folded" ]
check_status "default output: trace.alys -> trace.folded" $?
run -f svgz "$W/full.alys"
[ $RC -eq 2 ] && err_has "valid formats: json, pprof, folded-stacks, flamegraph, report"
check_status "unknown format lists the valid ones" $?
run "$W/does-not-exist.alys"
[ $RC -eq 1 ] && err_has "no such file" && clean_run
check_status "missing trace file says so" $?
run -o "$W/full.alys" "$W/full.alys"
[ $RC -eq 1 ] && err_has "is the input trace"
check_status "refuses to overwrite the input" $?
run --depth x "$W/full.alys"
[ $RC -eq 2 ] && err_has "--depth x"
check_status "bad --depth is rejected" $?

# ---- cut short traces --------------------------------------------------------
size=$(stat -c %s "$W/full.alys")
# cut_test INDEX_LINE: cut one byte into the record on that line of the index
cut_test() {
	local off kind events
	read -r off kind < <(sed -n "${1}p" "$W/full.index")
	events=$(head -n $(($1 - 1)) "$W/full.index" | grep -c ' event$' || true)
	head -c $((off + 1)) "$W/full.alys" >"$W/cut.alys"
	run -o - "$W/cut.alys"
	[ $RC -eq 0 ] && clean_run && [ "$(grep -c 'cut short' "$W/err")" -eq 1 ] &&
		err_has "warning: $W/cut.alys: cut short at byte $off (" &&
		err_has "using the $events events before it" &&
		python3 -c "import json,sys; d=json.load(open('$W/out')); sys.exit(len(d['events']) != $events or d['end'] is not None)"
}
nrec=$(wc -l <"$W/full.index")
for line in 1 6 $((nrec / 2)) $((nrec - 1)) $nrec; do
	check "cut inside record $line of $nrec: warning names the offset, earlier events kept" cut_test $line
done
for cut in 5 $((size - 1)) $((size - 3)); do
	head -c $cut "$W/full.alys" >"$W/cut.alys"
	run -o - "$W/cut.alys"
	clean_run && [ -s "$W/err" ] && { [ $RC -eq 0 ] || [ $RC -eq 1 ]; }
	check_status "cut at byte $cut of $size: no crash, exit 0 or 1 with a message" $?
done
head -c 5 "$W/full.alys" >"$W/cut.alys"
run -o - "$W/cut.alys"
[ $RC -eq 1 ] && err_has "ends inside its header"
check_status "cut inside the header: error" $?

grep -v '^end' "$W/full.script" | "$W/gen" >"$W/noend.alys"
run -o "$W/noend.json" "$W/noend.alys"
[ $RC -eq 0 ] && err_has "cut short at byte $(stat -c %s "$W/noend.alys") (no end record): using the 8 events before it"
check_status "no end record: one warning naming the file size, all events kept" $?

# ---- broken and hostile input ------------------------------------------------
{ header NOT-ALYS; echo "end exit 0 0 0"; } | "$W/gen" >"$W/magic.alys"
run -o - "$W/magic.alys"
[ $RC -eq 1 ] && err_has "magic.alys: byte 0: not an alys-bpf trace" && [ ! -s "$W/out" ]
check_status "bad magic: exit 1, not an alys-bpf trace" $?

{ header alys-bpf 3; echo "end exit 0 0 0"; } | "$W/gen" >"$W/v3.alys"
run -o - "$W/v3.alys"
[ $RC -eq 1 ] && err_has "trace format version 3, this converter reads versions 1 to 2"
check_status "version 3: message names the versions it reads" $?

printf '\x00' >"$W/tiny.alys"
run -o - "$W/tiny.alys"
[ $RC -eq 1 ] && err_has "not an alys-bpf trace" && clean_run
check_status "a lone byte is not a trace" $?
: >"$W/empty.alys"
run -o - "$W/empty.alys"
[ $RC -eq 1 ] && err_has "is empty" && clean_run
check_status "empty file: exit 1 with a message" $?

{ header; echo "event 9 1 1 1 1 0 0 0 1 0"; } | "$W/gen" -i "$W/kind.index" >"$W/kind.alys"
run -o - "$W/kind.alys"
[ $RC -eq 1 ] && [ "$(err_lines)" -eq 1 ] && err_has "kind.alys: byte $(cut -d" " -f1 "$W/kind.index"): event kind 9 is not one of"
check_status "malformed record: one line naming file, byte and problem" $?

{ header; echo "raw 93030102"; } | "$W/gen" >"$W/short-ev.alys"
run -o - "$W/short-ev.alys"
[ $RC -eq 1 ] && err_has "event record has 3 fields, expected 11"
check_status "event with too few fields is malformed" $?

{ header; echo "raw 9203a3616263"; } | "$W/gen" >"$W/strkind.alys"
run -o - "$W/strkind.alys"
[ $RC -eq 1 ] && err_has "event record has 2 fields" || err_has "expected an unsigned integer"
check_status "wrong field type is malformed" $?

# ---- inferred frees (records 6 and 7) ----------------------------------------
{
	header
	echo "stack 1 0x1000 0x2000"
	echo "stack 2 0x1000 0x3000"
	echo "event 1 10 7 32 0x10000 0 0 1 32 4"
	echo "event 2 11 7 64 0x20000 0 0 2 64 4"
	echo "event 1 12 7 32 0x30000 0 0 1 32 5"
	echo "death 13 0x10000 5 5 1"
	echo "death 14 0x20000 6 5 2"
	echo "collection 15 5 5 2 1 0 1234"
	echo "future"
	echo "end exit 0 20 3"
} | "$W/gen" >"$W/live.alys"
run --inline-stacks -o "$W/live.json" "$W/live.alys"
[ $RC -eq 0 ]
check_status "inferred frees: converted, exit 0" $?
check "inferred frees: free events with cause, collection and the block they end" \
	python3 -c "
import json, sys
d = json.load(open('$W/live.json'))
f = [e for e in d['events'] if e['kind'] == 'free']
got = [(e['cause'], e['collection'], e['since_collection'], e['prev_id'], e['prev_size'], e['addr'], e['tid'], e['stack']) for e in f]
want = [('collected', 5, 5, 1, 32, '0x10000', 0, []), ('reused', 6, 5, 2, 64, '0x20000', 0, [])]
c = d['collections']
sys.exit(got != want or c != [{'time_ns': 15 - d['header']['start_ns'], 'gc_no': 5, 'since': 5, 'judged': 2, 'dead': 1, 'unreadable': 0, 'scan_ns': 1234, 'followed': None, 'at_end': None}] and f'{got} {c}')"
run -f leaks -o - "$W/live.alys"
[ $RC -eq 0 ] && grep -Eq "^ +32 +1 +64 +1\.0 +1  0x2000" "$W/out" && ! grep -q "0x3000" "$W/out" && grep -q "^liveness: off; 1 collections read" "$W/out"
check_status "-f leaks: in-use bytes by site after the inferred frees" $?
grep -Eq "^ +7 +3 +128 +32 +1$" "$W/out"
check_status "-f leaks: by allocating thread" $?
{ header; echo "death 1 0x10 5 5 3"; } | "$W/gen" >"$W/cause.alys"
run -o - "$W/cause.alys"
[ $RC -eq 1 ] && err_has "inferred free cause 3 is not 1 (collected) or 2 (reused)"
check_status "inferred free with an unknown cause is malformed" $?
# A death found one collection before its first possible one (an
# allocation racing a collection on another thread): counted and said,
# the rest of the trace converts, the free taken at the collection found.
{ header; echo "event 1 1 7 32 0x10 0 0 0 1 4"; echo "death 2 0x10 5 6 1";
  echo "event 1 3 7 64 0x20 0 0 0 1 5"; } | "$W/gen" >"$W/since.alys"
run -f json -o - "$W/since.alys"
[ $RC -eq 0 ] && err_has "1 inferred frees were found dead at a collection before the first one they could die at (first: byte" &&
	err_has "found at collection 5, first possible 6)" &&
	"$ALYS_PYTHON" -c "
import json, sys
ev = json.load(open('$W/out'))['events']
f = [e for e in ev if e['kind'] == 'free']
sys.exit(not (len(ev) == 3 and len(f) == 1 and f[0]['collection'] == 5 and f[0]['since_collection'] == 5))"
check_status "inferred free found dead before it could die: counted, said, the trace converts" $?
# Records of several threads as a ring buffer may deliver them: four
# threads allocating, freeing and reallocating, collections and the
# tracer's inferred frees (some stamped one collection ahead), written in
# time order, then interleaved at random (each thread's own order kept,
# times no longer ascending): both convert to the same totals in every
# format that sums them.
shuffled_test() {
	"$ALYS_PYTHON" - "$W" <<'PY' || return 1
import random, sys
w = sys.argv[1]
rng = random.Random(7)
streams = {t: [] for t in (11, 12, 13, 14)}
tracer = []
ts = 1000
live = {t: [] for t in streams}
gc = 1
for step in range(4000):
    t = rng.choice(list(streams))
    ts += rng.randint(1, 50)
    r = rng.random()
    if r < 0.6 or not live[t]:
        addr = (t << 24) + step * 128
        kind = 1 if rng.random() < 0.7 else 2
        size = rng.choice((16, 32, 48, 2048, 9000))
        streams[t].append((ts, "event %d %d %d %d 0x%x 0 0 0 %d %d" % (kind, ts, t, size, addr, size, gc)))
        live[t].append((addr, size, gc))
    elif r < 0.75:
        addr, size, _ = live[t].pop(rng.randrange(len(live[t])))
        streams[t].append((ts, "event 4 %d %d 0 0x%x 0 %d 0 0 %d" % (ts, t, addr, size, gc)))
    elif r < 0.85:
        addr, size, _ = live[t].pop(rng.randrange(len(live[t])))
        new = (t << 24) + step * 128 + 64	# no other block's address
        streams[t].append((ts, "event 3 %d %d %d 0x%x 0x%x %d 0 %d %d" % (ts, t, size * 2, new, addr, size, size * 2, gc)))
        live[t].append((new, size * 2, gc))
    else:
        gc += 1
        dead = []
        for u in streams:
            for blk in list(live[u]):
                if blk[2] < gc and rng.random() < 0.3:
                    live[u].remove(blk)
                    dead.append(blk)
        for addr, size, since in dead:
            # one in ten stamped a collection ahead (its stamp raced this one)
            s = since + 1 if rng.random() < 0.1 else since
            tracer.append((ts, "death %d 0x%x %d %d 1" % (ts, addr, gc, min(s, gc + 1))))
        tracer.append((ts, "collection %d %d %d %d %d 0 100 %d 0" % (ts, gc, gc - 1, len(dead) + 5, len(dead), len(dead) + 5)))
head = ["header alys-bpf 2 4242 /nonexistent 1000"]
tail = ["end exit 0 %d 0" % (ts + 1)]
everything = sorted([r for s in streams.values() for r in s] + tracer, key=lambda r: r[0])
open(w + "/ordered.gen", "w").write("\n".join(head + [r[1] for r in everything] + tail) + "\n")
# interleave: each thread's records in its order, the tracer's after the
# allocations they name (it sees them first), otherwise at random
queues = [list(s) for s in streams.values()]
out, ti = [], 0
pos = {}
while any(queues) or ti < len(tracer):
    choices = [q for q in queues if q]
    if ti < len(tracer):
        choices.append(None)
    q = rng.choice(choices)
    if q is None:
        rec = tracer[ti]
        # the allocations it follows were sent before it in time order
        pending = [qq for qq in queues if qq and qq[0][0] <= rec[0]]
        if pending:
            out.append(pending[0].pop(0)[1])
            continue
        out.append(rec[1])
        ti += 1
    else:
        out.append(q.pop(0)[1])
open(w + "/shuffled.gen", "w").write("\n".join(head + out + tail) + "\n")
PY
	"$W/gen" <"$W/ordered.gen" >"$W/ordered.alys" && "$W/gen" <"$W/shuffled.gen" >"$W/shuffled.alys" ||
		return 1
	cmp -s "$W/ordered.gen" "$W/shuffled.gen" && return 1	# shuffled at all
	for fmt in report leaks folded-stacks; do
		"$CONV" -q -f $fmt -o "$W/ordered.$fmt" "$W/ordered.alys" 2>"$W/err" || return 1
		"$CONV" -q -f $fmt -o "$W/shuffled.$fmt" "$W/shuffled.alys" 2>>"$W/err" || return 1
	done
	for f in Allocated: "Not freed by the end:"; do
		[ "$(grep -F "$f" "$W/ordered.report")" = "$(grep -F "$f" "$W/shuffled.report")" ] ||
			return 1
		grep -qF "$f" "$W/ordered.report" || return 1
	done
	grep -Eq "Allocated: [0-9]+ objects, [0-9]+ bytes in [0-9]{4} allocation events; [0-9]{3,} frees" \
		"$W/ordered.report" || return 1
	cmp -s <(sort "$W/ordered.folded-stacks") <(sort "$W/shuffled.folded-stacks") || return 1
	[ "$(grep -c . "$W/ordered.leaks")" -gt 3 ] &&
		diff <(grep -v "^Trace\|alys_converter\|\.alys" "$W/ordered.leaks") \
			<(grep -v "^Trace\|alys_converter\|\.alys" "$W/shuffled.leaks") >/dev/null
}
check "records shuffled across threads (each thread's order kept) convert to the same totals" shuffled_test
{ header; echo "raw 9306010203"; } | "$W/gen" >"$W/short-death.alys"
run -o - "$W/short-death.alys"
[ $RC -eq 1 ] && err_has "inferred free record has 3 fields, expected 6"
check_status "short inferred-free record is malformed" $?
{ header; echo "raw 92070a"; } | "$W/gen" >"$W/short-coll.alys"
run -o - "$W/short-coll.alys"
[ $RC -eq 1 ] && err_has "collection record has 2 fields, expected 8"
check_status "short collection record is malformed" $?
# version 2: what the scan followed, and whether it was the one at exit
{ header alys-bpf 2; echo "collection 15 5 5 2 1 0 1234 3 1"; echo "end exit 0 20 0"; } |
	"$W/gen" >"$W/v2coll.alys"
run -o - "$W/v2coll.alys"
[ $RC -eq 0 ] && python3 -c "
import json, sys
c = json.load(open('$W/out'))['collections']
sys.exit(c[0]['followed'] != 3 or c[0]['at_end'] is not True)"
check_status "version 2 collection: followed and at_end" $?
{ header alys-bpf 2; echo "collection 15 5 5 2 1 0 1234"; } | "$W/gen" >"$W/v2short.alys"
run -o - "$W/v2short.alys"
[ $RC -eq 1 ] && err_has "collection record has 8 fields, expected 10"
check_status "version 2 collection without followed is malformed" $?
{ header alys-bpf 2; echo "collection 15 5 5 2 1 0 1234 1 0"; } | "$W/gen" >"$W/followed.alys"
run -o - "$W/followed.alys"
[ $RC -eq 1 ] && err_has "followed 1 below judged 2"
check_status "collection following fewer blocks than it judged is malformed" $?

# ---- compressed blocks (record 12) -------------------------------------------
blocks() {
	header alys-bpf 2
	echo "block"
	echo "nodes 1 0 0 0x1000 0x2000"
	echo "event 1 10 7 32 0x10000 0 0 1 32 4"
	echo "endblock ${1:-}"
	echo "block"
	echo "event 1 11 7 64 0x20000 0 0 1 64 4"
	echo "event 2 12 7 16 0x30000 0 0 1 16 4"
	echo "endblock"
	echo "end exit 0 20 3"
}
blocks | "$W/gen" -i "$W/blocks.idx" >"$W/blocks.alys"
run -f json -o - "$W/blocks.alys"
[ $RC -eq 0 ] && python3 -c "
import json, sys
d = json.load(open('$W/out'))
sys.exit([e['size'] for e in d['events']] != [32, 64, 16] or d['end']['events'] != 3)"
check_status "blocks: the records of every block read in order" $?
# 5 bytes before the end record: inside the second block
head -c $(($(awk '$2 == "end" { print $1 }' "$W/blocks.idx") - 5)) "$W/blocks.alys" >"$W/blocks-cut.alys"
run -f json -o - "$W/blocks-cut.alys"
[ $RC -eq 0 ] && err_has "cut short at byte" && err_has "using the 1 events before it"
check_status "blocks: cut inside the second block, the first one's event kept" $?
blocks "3" | "$W/gen" >"$W/blocks-count.alys"
run -o - "$W/blocks-count.alys"
[ $RC -eq 1 ] && err_has "block says 3 records, holds 2"
check_status "block with a wrong record count is malformed" $?
blocks "2 7" | "$W/gen" >"$W/blocks-codec.alys"
run -o - "$W/blocks-codec.alys"
[ $RC -eq 1 ] && err_has "block codec 7 unknown"
check_status "block with an unknown codec is malformed" $?
blocks "2 1 999" | "$W/gen" >"$W/blocks-len.alys"
run -o - "$W/blocks-len.alys"
[ $RC -eq 1 ] && err_has "block says 999 bytes, its zstd frame another size"
check_status "block whose length is not its frame's is malformed" $?
blocks "2 1 4294967296" | "$W/gen" >"$W/blocks-huge.alys"
run -o - "$W/blocks-huge.alys"
[ $RC -eq 1 ] && err_has "block of 4294967296 bytes, more than the"
check_status "block bigger than a writer makes is refused before inflating" $?
{ header alys-bpf 2; echo block; echo "raw 9403"; echo "endblock 1"; } | "$W/gen" >"$W/blocks-inner-cut.alys"
run -o - "$W/blocks-inner-cut.alys"
[ $RC -eq 1 ] && err_has "the block's records end inside one"
check_status "block holding a cut record is malformed, not a cut file" $?
{ header alys-bpf 2; echo block; echo "raw 95"; echo "raw 0c010000c400"; echo "endblock 1"; } |
	"$W/gen" >"$W/blocks-nested.alys"
run -o - "$W/blocks-nested.alys"
[ $RC -eq 1 ] && err_has "a block inside a block"
check_status "block inside a block is malformed" $?
{ header alys-bpf 2; echo "raw 950c010100c40400000000"; } | "$W/gen" >"$W/blocks-junk.alys"
run -o - "$W/blocks-junk.alys"
[ $RC -eq 1 ] && err_has "its zstd frame is not one"
check_status "block of junk bytes is malformed" $?

# ---- heap snapshot (records 9-11) -------------------------------------------
# A registry (slot 0) holds two objects that both lead to a third (one by an
# interior pointer); slot 4 points at the registry but nothing points at it;
# an atomic block holds a pointer to slot 4 that is not one (no pointers in
# atomic blocks). 32-byte slots in a 256-byte block.
snapshot_script() {
	header
	echo "heapblock 0x10000 32 1 7 0x10020 0x10040 0 7 0x10060 0 0 7 0x10068 0 0 7 0 0 0 7 0x10000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
	echo "heapblock 0x20000 256 0 0x10080"
	echo "root 1 x:646174612070726f67 0x5000 0x10000 0x99999"
	echo "snapshot 100 2000000 2 512 1 $1 256"
	echo "end snapshot 0 200 0"
}
snapshot_script 1 | "$W/gen" >"$W/heap.alys"
run -f heap -o - "$W/heap.alys"
heap_row() { sed -n '/^type /,/^$/p' "$W/out" | awk -F '  +' -v t="$1" -v f="$2" '$1 == t { print $f }'; }
# no type ids here: the registry and what it leads to are named by their
# root, a global
[ $RC -eq 0 ] && clean_run &&
	[ "$(heap_row "(block held by a global)" 2) $(heap_row "(block held by a global)" 3) $(heap_row "(block held by a global)" 4)" = "4 128 128" ]
check_status "heap: 4 objects reachable, 128 bytes, retained once (the slots below the registry are of its kind)" $?
grep -q "^Reachable from the roots: 4 objects, 128 bytes (the heap holds 9 slots, 512 bytes); interior pointers recognized" "$W/out"
check_status "heap: the atomic block is not reached, its word is no pointer" $?
sed -n '/^Top retaining/,$p' "$W/out" | sed -n 2,3p | tr '\n' ' ' | tr -s ' ' |
	grep -qx " 1 128 bytes retained (block held by a global)@0x10000 data prog 0x5000 -> (block held by a global)@0x10000 "
check_status "heap: the registry retains all four, found from the root's first word" $?
sed -n '/^Top retaining/,$p' "$W/out" | grep -A1 "retained .*@0x10060" | tail -n 1 | grep -q "(+8) .*@0x10020 -> (+8) .*@0x10060"
check_status "heap: the third object's shortest path goes through the first, with the pointers' offsets" $?
{ header; echo "heapblock 0x30000 256 1 0"; echo "root 1 x:646174612070726f67 0x5000 0x30000";
  echo "snapshot 50 1000 1 256 1 1 256"; snapshot_script 1 | tail -n +2; } | "$W/gen" >"$W/heap2.alys"
run -f heap -o - "$W/heap2.alys"
[ $RC -eq 0 ] && grep -q "^Reachable from the roots: 4 objects, 128 bytes (the heap holds 9 slots, 512 bytes)" "$W/out" &&
	grep -q "^Heap snapshot of pid .*: stopped 2.0 ms; 2 blocks, 1 roots" "$W/out"
check_status "heap: of two snapshots in a trace, the last is analysed, with its own blocks and roots" $?
snapshot_script 0 | "$W/gen" >"$W/heap0.alys"
run -f heap -o - "$W/heap0.alys"
[ $RC -eq 0 ] && grep -q "^Reachable from the roots: 4 objects, 128 bytes .*interior pointers not recognized" "$W/out"
check_status "heap: without interior pointers, the interior one is no edge (the third is reached through the first)" $?
{ header; echo "heapblock 0x10000 0 1 0"; echo "snapshot 100 2 1 0 0 1 256"; } | "$W/gen" >"$W/heapbad.alys"
run -f heap -o - "$W/heapbad.alys"
[ $RC -eq 1 ] && err_has "heap block at 0x10000 has object size 0"
check_status "heap: a block of object size 0 is malformed" $?
{ header; echo "snapshot 100 2 1 0 0 1 300"; } | "$W/gen" >"$W/heapbs.alys"
run -f heap -o - "$W/heapbs.alys"
[ $RC -eq 1 ] && err_has "snapshot block size 300 is not a power of two"
check_status "heap: a block size that is no power of two is malformed" $?

# ---- diff ----------------------------------------------------------------
{
	header
	echo "stack 1 0x1000 0x2000"
	for i in 1 2 3 4 5 6 7 8 9 10; do echo "event 1 $i 7 16 0x$i"000" 0 0 1 16 1"; done
	echo "end exit 0 20 10"
} | "$W/gen" >"$W/d10.alys"
{
	header
	echo "stack 1 0x1000 0x2000"
	for i in 1 2 3 4 5 6 7 8 9 10 11; do echo "event 1 $i 7 16 0x$i"000" 0 0 1 16 1"; done
	echo "end exit 0 20 11"
} | "$W/gen" >"$W/d11.alys"
run diff --fail-above 5 "$W/d10.alys" "$W/d10.alys"
[ $RC -eq 0 ] && grep -Eq "^ +10 +10 +\+0\.0% +160 +160 +\+0\.0% .*\[total\]" "$W/out"
check_status "diff: a trace against itself exits 0" $?
run diff --fail-above 5 "$W/d10.alys" "$W/d11.alys"
[ $RC -eq 1 ] && err_has "allocations +10.0%, bytes +10.0% (limit +5.0%): 0x2000"
check_status "diff: 10% more allocations at a site exceed --fail-above 5" $?
run diff --fail-above 10 "$W/d10.alys" "$W/d11.alys"
[ $RC -eq 0 ]
check_status "diff: and stay within --fail-above 10" $?
run diff --fail-above x "$W/d10.alys" "$W/d11.alys"
[ $RC -eq 2 ] && err_has "expected a percentage"
check_status "diff: a bad percentage is a usage error" $?
run diff "$W/d10.alys" "$W/nonexistent.alys"
[ $RC -eq 2 ] && err_has "nonexistent.alys: no such file"
check_status "diff: a missing trace exits 2, naming it" $?

# an array claiming 4 billion elements must not be believed
{ header; echo "raw ddffffffff01"; } | "$W/gen" >"$W/huge.alys"
run -o - "$W/huge.alys"
[ $RC -eq 0 ] && clean_run && err_has "cut short at byte"
check_status "huge array count: treated as cut short, no allocation" $?
{ header; echo "raw 9302ceffffffffdbffffffff"; } | "$W/gen" >"$W/huge2.alys"
run -o - "$W/huge2.alys"
[ $RC -eq 0 ] && clean_run && err_has "cut short"
check_status "huge string length: treated as cut short" $?
{ header; echo "raw 91919191919191919191919191919191919101"; } | "$W/gen" >"$W/deep.alys"
run -o - "$W/deep.alys"
[ $RC -eq 1 ] && clean_run && err_has "nested"
check_status "deep nesting: exit 1, no crash" $?
{ header; echo "raw c1"; } | "$W/gen" >"$W/c1.alys"
run -o - "$W/c1.alys"
[ $RC -eq 1 ] && clean_run && err_has "not valid MessagePack"
check_status "byte 0xc1: exit 1 with a message" $?

{ header; echo "event 1 5 1 8 0x100 0 0 77 8 0"; echo "end exit 0 0 1"; } | "$W/gen" >"$W/undef.alys"
run --inline-stacks -o - "$W/undef.alys"
[ $RC -eq 0 ] && err_has "stack id 77" && python3 -c "import json,sys; sys.exit(json.load(open(\"$W/out\"))[\"events\"][0][\"stack\"] != [])"
check_status "event with an undefined stack: warning, shown without stack" $?

# two CPUs: an event may come before the record of its new stack
{ header; echo "event 1 5 1 8 0x100 0 0 77 8 0"; echo "stack 77 0x1234 0x5678"; echo "end exit 0 0 1"; } |
	"$W/gen" >"$W/late.alys"
run --inline-stacks -o - "$W/late.alys"
[ $RC -eq 0 ] && [ "$(err_lines)" -eq 0 ] && python3 -c "import json,sys; e = json.load(open(\"$W/out\"))[\"events\"][0]; sys.exit(not (e[\"stack_id\"] == 77 and len(e[\"stack\"]) == 2))"
check_status "stack record after its first event: resolved, no warning" $?

# strings with quotes, control characters and invalid UTF-8 must still give JSON
{ echo "header alys-bpf 1 1 x:22415c0a01ff80c3a8e282ac 1"; echo "end x:0a3b3b 0 0 0"; } | "$W/gen" >"$W/esc.alys"
run -o - "$W/esc.alys"
check "json escapes quotes, control bytes and invalid UTF-8" \
	python3 -c "import json,sys; d=json.load(open('$W/out')); sys.exit(d['header']['exe'] != '\"A\\\\\n\x01\ufffd\ufffd\u00e8\u20ac' or d['end']['reason'] != '\n;;')"

garbage_test() {
	python3 -c "import random,sys; r=random.Random($1); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(r.randrange(1,4000))))" >"$W/garbage.alys"
	run -o - "$W/garbage.alys"
	[ $RC -eq 1 ] && clean_run && [ "$(err_lines)" -eq 1 ]
}
for seed in 1 2 3 4 5; do
	check "garbage bytes (seed $seed): exit 1, one message, no crash" garbage_test $seed
done

# flip bytes all over a valid trace: any outcome but a crash or sanitizer report
mutate_test() {
	local bad=0 seed
	# one python start for all files: it is the slow part
	python3 - "$W/full.alys" "$W/mut" "$1" <<'PY'
import random, sys
src = open(sys.argv[1], "rb").read()
for seed in range(1, int(sys.argv[3]) + 1):
    r = random.Random(seed)
    b = bytearray(src)
    for _ in range(r.randrange(1, 6)):
        b[r.randrange(len(b))] = r.randrange(256)
    if r.random() < 0.3:
        del b[r.randrange(len(b)):]
    open(f"{sys.argv[2]}-{seed}.alys", "wb").write(b)
PY
	for seed in $(seq 1 "$1"); do
		run -o - "$W/mut-$seed.alys"
		if ! clean_run; then
			echo "# mutation seed $seed: status $RC"
			bad=1
			break
		fi
		run -f folded-stacks -o - "$W/mut-$seed.alys"
		if ! clean_run; then
			echo "# mutation seed $seed (folded): status $RC"
			bad=1
			break
		fi
		# the other formats on every 10th, in turn (each run costs, under ASan)
		if [ $((seed % 10)) -eq 0 ]; then
			local fmts=(pprof flamegraph report) fmt
			fmt=${fmts[$((seed / 10 % 3))]}
			run -f "$fmt" -o "$W/mut.out" "$W/mut-$seed.alys"
			if ! clean_run; then
				echo "# mutation seed $seed ($fmt): status $RC"
				bad=1
				break
			fi
		fi
	done
	return $bad
}
# 120: under ASan each costs ~0.25 s; tests/unit/test_fuzz.sh and `make fuzz` go further.
check "120 mutated traces: no crash, no sanitizer report" mutate_test 120

# ---- build ids ---------------------------------------------------------------
{
	header
	mapping "$P" $PIE 0123456789abcdef0123456789abcdef01234567
	echo "stack 1 $(ip0 "$P" $PIE GC_malloc) $(ret "$P" $PIE make_widget)"
	echo "event 1 5 1 8 0x100 0 0 1 8 0"
	echo "end exit 0 0 1"
} | "$W/gen" >"$W/bid.alys"
run --inline-stacks -o - "$W/bid.alys"
real_id=$(build_id "$P")
[ $RC -eq 0 ] && [ "$(err_lines)" -eq 1 ] && err_has "$P: build id 0123456789abcdef0123456789abcdef01234567 in the trace, $real_id on this machine"
check_status "build id mismatch: one warning with file and both ids" $?
check "build id mismatch: frames stay as [file+0xoffset]" \
	python3 -c "import json,sys; s=json.load(open('$W/out'))['events'][0]['stack']; sys.exit(not all(f['name'].startswith('[prog+0x') for f in s))"

# mappings written later win where they overlap: remap the library's range
{
	header
	mapping "$P" $PIE
	echo "stack 1 $(ip0 "$P" $PIE GC_malloc) $(ret "$L" $PIE lib_helper)"
	mapping "$L" $PIE
	echo "event 1 5 1 8 0x100 0 0 1 8 0"
	echo "end exit 0 0 1"
} | "$W/gen" >"$W/overlap.alys"
run -f folded-stacks -o - "$W/overlap.alys"
[ $RC -eq 0 ] && grep -q "^lib_helper;" "$W/out"
check_status "a later overlapping mapping wins" $?

# --debug-dir: the traced path is gone, a copy is found by build id
real_id=$(build_id "$P")
mkdir -p "$W/dbg/.build-id/${real_id:0:2}" "$W/dbg-wrong"
cp "$P" "$W/dbg/.build-id/${real_id:0:2}/${real_id:2}.debug"
cp "$N" "$W/dbg-wrong/prog"	# right name, other build id: must not be used
{
	header
	mapping "$P" $PIE | sed "s|$P|/gone/prog|"
	echo "stack 1 $(ip0 "$P" $PIE GC_malloc) $(ret "$P" $PIE make_widget)"
	echo "event 1 5 1 8 0x100 0 0 1 8 0"
	echo "end exit 0 0 1"
} | "$W/gen" >"$W/gone.alys"
run -f folded-stacks -o - --debug-dir "$W/dbg" "$W/gone.alys"
[ $RC -eq 0 ] && grep -qxF "make_widget 8" "$W/out" && [ "$(err_lines)" -eq 0 ]
check_status "--debug-dir: a binary found by build id symbolizes, silently" $?
run -f folded-stacks -o - --debug-dir "$W/dbg-wrong" "$W/gone.alys"
[ $RC -eq 0 ] && grep -q "^\[prog+0x" "$W/out" && err_has "cannot open /gone/prog" && err_has ", nor under --debug-dir, and no gone.alys.debug beside the trace:"
check_status "--debug-dir: a same-named file with another build id is not used" $?
run -f folded-stacks -o - --debug-dir "$W/nonexistent" "$W/gone.alys"
[ $RC -eq 2 ] && err_has "not a directory"
check_status "--debug-dir that is not a directory: usage error" $?

# ---- pprof, flamegraph, report on the synthetic trace ---------------------------
PROTO_DIR=/usr/share/gocode/src/github.com/google/pprof/proto
pprof_totals() {
	gzip -dc "$1" | protoc --decode=perftools.profiles.Profile -I "$PROTO_DIR" "$PROTO_DIR/profile.proto" |
		python3 -c '
import re, sys
t = sys.stdin.read()
vals = [int(v) for v in re.findall(r"^\s+value: (-?\d+)$", t, re.M)]
print(" ".join(str(sum(vals[k::4])) for k in range(4)))'
}
run -f pprof -o "$W/full.pb.gz" "$W/full.alys"
[ $RC -eq 0 ] && clean_run
check_status "pprof: converts, exit 0" $?
# 7 allocations of 100+200+300+50+60+70+80 bytes; the free gives back event 2
# (200), the realloc event 1 (100)
check_eq_pprof() { [ "$(pprof_totals "$W/full.pb.gz")" == "7 860 5 560" ]; }
check "pprof: protoc decodes it; totals 7 objects, 860 bytes, 5 / 560 in use" check_eq_pprof
pprof_default_type() {
	gzip -dc "$1" | protoc --decode=perftools.profiles.Profile -I "$PROTO_DIR" "$PROTO_DIR/profile.proto" |
		python3 -c '
import re, sys
t = sys.stdin.read()
st = [""] + [eval("b" + s).decode() for s in re.findall(r"^string_table: (\".*\")$", t, re.M)][1:]
print(st[int(re.search(r"^default_sample_type: (\d+)$", t, re.M).group(1))])'
}

# ---- GC pauses (record 13) --------------------------------------------------------
# Three pauses of 1000, 3000 and 500 ns (the first in a collection of 1150
# ns, the second's record without the optional collection fields, the third
# without a stack): the JSON lists them, the report's section counts them
# (p50 by nearest rank: 1000 ns), pprof --pauses sums them by stack.
{
	header
	echo "stack 1 0x1000 0x2000"
	echo "event 1 10 7 32 0x10000 0 0 1 32 4"
	echo "pause 100 1100 7 1 1 50 1200"
	echo "pause 2000 5000 7 2 1"
	echo "pause 6000 6500 8 3 0 0 0"
	echo "end exit 0 9000 1"
} | "$W/gen" >"$W/pauses.alys"
run -o "$W/pauses.json" "$W/pauses.alys"
[ $RC -eq 0 ] && clean_run && python3 -c "
import json, sys
d = json.load(open('$W/pauses.json'))
s0 = d['header']['start_ns']
got = [(p['time_ns'] + s0, p['duration_ns'], p['collection_ns'], p['tid'], p['gc_no'], p['stack_id']) for p in d['pauses']]
sys.exit(got != [(100, 1000, 1150, 7, 1, 1), (2000, 3000, None, 7, 2, 1), (6000, 500, None, 8, 3, 0)] and str(got))"
check_status "pauses: JSON lists the three with their collection (null when not measured)" $?
run -f report -o - "$W/pauses.alys"
[ $RC -eq 0 ] && grep -q "^  3 pauses, 0.004 ms in all.*; 0 asked for by GC.collect, 3 by allocations$" "$W/out" &&
	grep -q "^  p50 0.001 ms, p90 0.003 ms, p99 0.003 ms, max 0.003 ms$" "$W/out" &&
	grep -q "The collections around 1 of them took 0.001 ms" "$W/out" &&
	grep -Eq "^ +0\.003 +- +.* +2 +7  allocation  " "$W/out"
check_status "pauses: the report's section (count, total, quantiles, the longest first)" $?
run -f pprof --pauses -o "$W/pauses.pb.gz" "$W/pauses.alys"
# two sample types: the totals' fields pair up as (count, ns) twice
[ $RC -eq 0 ] && [ "$(pprof_totals "$W/pauses.pb.gz" | awk '{ print $1 + $3, $2 + $4 }')" = "3 4500" ] &&
	[ "$(pprof_default_type "$W/pauses.pb.gz")" = gc_pause ]
check_status "pprof --pauses: 3 pauses, 4500 ns, gc_pause the default type" $?
run -f report --pauses -o - "$W/pauses.alys"
[ $RC -eq 2 ] && err_has "-f report does not honour --pauses"
check_status "--pauses: refused by formats that do not honour it" $?
{ header; echo "pause 200 100 7 1 0"; } | "$W/gen" >"$W/pause_bad.alys"
run -o - "$W/pause_bad.alys"
[ $RC -eq 1 ] && err_has "pause restarted at 100, before it stopped at 200"
check_status "a pause that restarts before it stops is malformed" $?
{ header; echo "pause 200 300 7 1 0 250 400"; } | "$W/gen" >"$W/pause_bad2.alys"
run -o - "$W/pause_bad2.alys"
[ $RC -eq 1 ] && err_has "does not hold the pause"
check_status "a pause outside its collection is malformed" $?

# ---- where RSS goes (records 14 and 15) --------------------------------------------
# Two memory samples (RSS 100 MiB then 80 MiB: the first is the peak) and
# three growths of the heap, two from stack 1's site: the JSON lists them,
# the report's Memory section shows both samples and the growths by site,
# the timeline stacks the six parts.
{
	header
	echo "stack 1 0x1000 0x2000"
	echo "event 1 $((START + 10)) 7 32 0x10000 0 0 1 32 4"
	echo "grow $((START + 50)) 7 65536 0 0"
	echo "grow $((START + 60)) 7 1048576 1 1"
	echo "grow $((START + 70)) 7 2097152 2 1"
	echo "memory $((START + 1000)) 104857600 62914560 41943040 73400320 1048576 2097152 20971520 101 1048576 10485760 9437184 2"
	echo "memory $((START + 2000)) 83886080 41943040 31457280 73400320 1048576 2097152 20971520 101 1048576 10485760 9437184 3"
	echo "end exit 0 $((START + 9000)) 1"
} | "$W/gen" >"$W/memory.alys"
run -o "$W/memory.json" "$W/memory.alys"
[ $RC -eq 0 ] && clean_run && python3 -c "
import json, sys
d = json.load(open('$W/memory.json'))
s0 = d['header']['start_ns']
m = [(x['time_ns'], x['rss'], x['live'], x['fiber_stacks'], x['fibers'], x['gc_no']) for x in d['memory']]
g = [(x['time_ns'], x['bytes'], x['gc_no'], x['stack_id']) for x in d['heap_growths']]
sys.exit((m, g) != ([(1000, 104857600, 41943040, 20971520, 101, 2), (2000, 83886080, 31457280, 20971520, 101, 3)],
                    [(50, 65536, 0, 0), (60, 1048576, 1, 1), (70, 2097152, 2, 1)]) and str((m, g)))"
check_status "memory: JSON lists the samples and the growths" $?
run -f report -o - "$W/memory.alys"
[ $RC -eq 0 ] && grep -q "^Memory (where RSS goes)" "$W/out" &&
	grep -Eq "^  RSS +100\.0 +100\.0% +80\.0 +100\.0%$" "$W/out" &&
	grep -Eq "^  live heap \(marked\) +40\.0 +40\.0% +30\.0 +37\.5%$" "$W/out" &&
	grep -Eq "^  free in heap +20\.0 +20\.0% +10\.0 +12\.5%$" "$W/out" &&
	grep -Eq "^  fiber stacks +20\.0 +20\.0% +20\.0 +25\.0%$" "$W/out" &&
	grep -Eq "^  \(parts summed\) +100\.0 +100\.0% +80\.0 +100\.0%$" "$W/out" &&
	grep -q "grew 3 times, 3.1 MiB in all" "$W/out" &&
	grep -Eq "^ +3\.0 +2  " "$W/out"
check_status "memory: the report's section (the peak, the last sample, growths by site)" $?
run -f timeline -o "$W/memory.svg" "$W/memory.alys"
[ $RC -eq 0 ] && xmllint --noout "$W/memory.svg" && [ "$(grep -c 'class="mem[0-5]"' "$W/memory.svg")" = 6 ] &&
	[ "$(grep -c 'class="grow"' "$W/memory.svg")" = 3 ]
check_status "memory: the timeline's panel (six parts, three growth ticks)" $?
{ header; echo "memory 2000 1 0 0 0 0 0 0 0 0 0 0 0"; echo "memory 1000 1 0 0 0 0 0 0 0 0 0 0 0"; } |
	"$W/gen" >"$W/memory_bad.alys"
run -o - "$W/memory_bad.alys"
[ $RC -eq 1 ] && err_has "memory sample at 1000, before the one at 2000"
check_status "a memory sample before the one before it is malformed" $?
{ header; echo "grow 50 7 0 0 0"; } | "$W/gen" >"$W/grow_bad.alys"
run -o - "$W/grow_bad.alys"
[ $RC -eq 1 ] && err_has "heap growth of 0 bytes"
check_status "a heap growth of 0 bytes is malformed" $?

[ "$(pprof_default_type "$W/full.pb.gz")" = alloc_space ]
check_status "pprof: allocations first (default_sample_type alloc_space)" $?
run -f pprof --at 0.0000025s -o "$W/at.pb.gz" "$W/full.alys"
[ $RC -eq 0 ] && [ "$(pprof_default_type "$W/at.pb.gz")" = inuse_space ]
check_status "pprof --at: what is live first (default_sample_type inuse_space)" $?
run -f pprof --time 0.0000025s.. -o "$W/late.pb.gz" "$W/full.alys"
[ $RC -eq 0 ] && [ "$(pprof_totals "$W/late.pb.gz")" == "5 560 5 560" ]
check_status "pprof --time 2.5us..: the realloc and later only" $?
run -f flamegraph --value objects -o "$W/full.svg" "$W/full.alys"
[ $RC -eq 0 ] && clean_run && xmllint --noout "$W/full.svg" && grep -q "<title>make_widget (2 objects" "$W/full.svg" && grep -q "<title>all (7 objects, 100.00%)" "$W/full.svg"
check_status "flamegraph --value objects: valid XML with make_widget and the total at the root" $?
run -f flamegraph -o "$W/full.svg" "$W/full.alys"
[ $RC -eq 0 ] && grep -q "<title>all (860 bytes, 100.00%)" "$W/full.svg" && grep -q ">860 bytes allocated<" "$W/full.svg" &&
	[ "$(grep -o "<title>GC_malloc ([0-9]* " "$W/full.svg")" = "<title>GC_malloc (60 " ]
check_status "flamegraph: bytes by default, in the title and tooltips; an allocator frame only in the lost stack" $?
run -f report -o - "$W/full.alys"
[ $RC -eq 0 ] && clean_run && grep -q "Allocated: 7 objects, 860 bytes in 7 allocation events; 1 frees" "$W/out" && grep -A3 "^Top allocation sites by bytes" "$W/out" | grep -qE "^ +1 +300 .*grow_buffer +test_converter_prog.c:[0-9]+$"
check_status "report: totals and the top site by bytes" $?
grep -qx "  Peak in use: 560 bytes at the end, at 0.000008 s (-f flamegraph --at peak draws them)" "$W/out"
check_status "report: the peak in use (here the end: 560 bytes)" $?
run -f flamegraph --at peak -o "$W/peak.svg" "$W/full.alys"
[ $RC -eq 0 ] && grep -q "<title>all (560 bytes, 100.00%)" "$W/peak.svg" && grep -q ">560 bytes in use at 0.000008 s<" "$W/peak.svg"
check_status "flamegraph --at peak: the bytes in use at the peak" $?
run -f flamegraph --at peak --time 1s.. -o - "$W/full.alys"
[ $RC -eq 2 ] && err_has "give one of --time and --at"
check_status "--at peak with --time: usage error" $?
run -f report --markdown -o - "$W/full.alys"
[ $RC -eq 0 ] && grep -q "^| # | bytes | % | objects | % | avg size | site |$" "$W/out"
check_status "report --markdown: tables" $?
run -f report --time x..y "$W/full.alys"
[ $RC -eq 2 ] && err_has "--time x..y: expected FROM..TO"
check_status "bad --time is rejected" $?
for fmt in pprof flamegraph report; do
	cp "$W/full.alys" "$W/named.alys"
	run -f $fmt "$W/named.alys"
done
[ -s "$W/named.pb.gz" ] && [ -s "$W/named.svg" ] && [ -s "$W/named.txt" ]
check_status "default output names: .pb.gz, .svg, .txt" $?
check_pprof_valid "pprof: full, --at, --time, default-named" "$W/full.pb.gz" "$W/at.pb.gz" \
	"$W/late.pb.gz" "$W/named.pb.gz"

# ---- a real Crystal binary --------------------------------------------------
# Crystal names (*Foo(T)::new<Int32>:Foo(Int32)) pass through untouched, and
# its DWARF, which has no address ranges on compile units, still gives lines.
# Built once into the build's work directory (slow), reused by later runs.
crystal_test() {
	local cw=$W/crystal
	local x=$cw/alloc gc
	mkdir -p "$cw"
	cat >"$cw/alloc.cr.new" <<'CR'
class Foo(T)
  def initialize(@v : T); end
end

def build(n)
  Array.new(n) { |i| Foo.new(i) }
end

p build(ARGV.size + 3).size
CR
	if ! cmp -s "$cw/alloc.cr.new" "$cw/alloc.cr" || [ ! -x "$x" ]; then
		mv "$cw/alloc.cr.new" "$cw/alloc.cr"
		(cd "$cw" && crystal build -o alloc alloc.cr >build.log 2>&1) || return 1
	fi
	gc=$(ldd "$x" | awk '$1 ~ /^libgc\.so/ { print $3; exit }')
	{
		echo "header alys-bpf 1 1 $x 0"
		mapping "$x" $PIE
		[ -z "$gc" ] || mapping "$gc" $LIB
		echo "stack 1 $( [ -n "$gc" ] && printf '0x%x' $((LIB + 0x$(nm -D "$gc" | awk '$3 == "GC_malloc" { print $1 }'))) || echo 0x1) $(ret "$x" $PIE '*Foo(T)::new<Int32>:Foo(Int32)') $(ret "$x" $PIE main)"
		echo "event 1 5 1 16 0x100 0 0 1 16 0"
		echo "end exit 0 0 1"
	} | "$W/gen" >"$W/crystal.alys"
	run --inline-stacks -o - "$W/crystal.alys"
	[ $RC -eq 0 ] && clean_run && cp "$W/out" "$W/shown.json" &&
		run --inline-stacks --full-names -o - "$W/crystal.alys" && [ $RC -eq 0 ] &&
		python3 - "$W/shown.json" "${gc:+GC_malloc}" "$W/out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["events"][0]["stack"]
full = json.load(open(sys.argv[3]))["events"][0]["stack"]
symbol = "*Foo(T)::new<Int32>:Foo(Int32)"
# shown as Crystal prints it (the generic's new makes Foo(Int32)), the
# symbol kept beside it; --full-names shows the symbol
want = ([sys.argv[2]] if sys.argv[2] else []) + ["Foo(Int32).new", "main"]
got = [f["name"] for f in s][-len(want):]
if got != want:
    sys.exit(f"names {got}, want {want}")
if s[-2].get("symbol") != symbol or "symbol" in s[-1]:
    sys.exit(f"symbols {s[-2].get('symbol')}, {s[-1].get('symbol')}: want {symbol}, none")
if full[-2]["name"] != symbol or "symbol" in full[-2]:
    sys.exit(f"--full-names: {full[-2]}, want the name {symbol}")
f = s[-2]
if not f.get("file", "").endswith("alloc.cr") or f.get("line") != 2:
    sys.exit(f"file:line {f.get('file')}:{f.get('line')}, want alloc.cr:2")
PY
}
# ---- options a format does not honour are refused, not ignored --------------
for fmt in leaks timeline census; do
	for o in "--time 0..1s" "--at 1s" "--type Foo" "--depth 2" "--min-bytes 10"; do
		# shellcheck disable=SC2086
		run -f $fmt $o -o "$W/never" "$W/full.alys"
		[ $RC -eq 2 ] && err_has "-f $fmt does not honour" && err_has "formats that do: " && [ ! -e "$W/never" ]
		check_status "-f $fmt $o: refused with exit 2, naming the formats that honour it" $?
	done
done
run -f json --min-bytes 10 -o "$W/never" "$W/full.alys"
[ $RC -eq 2 ] && err_has "-f json does not honour --min-bytes" && [ ! -e "$W/never" ]
check_status "-f json --min-bytes: refused (json lists events)" $?
run -f pprof --markdown -o "$W/never" "$W/full.alys"
[ $RC -eq 2 ] && err_has "formats that do: report"
check_status "-f pprof --markdown: refused" $?

# ---- optional flags: truncated stacks, anonymous mappings -------------------
{
	header
	mapping "$P" $PIE
	echo "mappingf 1 0x7f0000000000 0x7f0000001000 0x7f0000000000 //anon -"
	echo "stackf 1 1 $(ip0 "$P" $PIE GC_malloc) $(ret "$P" $PIE make_widget)"
	echo "stackf 0 2 $(ip0 "$P" $PIE GC_malloc) 0x7f0000000800 $(ret "$P" $PIE main)"
	echo "event 1 $((START + 1)) 1 16 0x100 0 0 1 16 0"
	echo "event 1 $((START + 2)) 1 16 0x200 0 0 2 16 0"
	echo "end exit 0 $((START + 3)) 2"
} | "$W/gen" >"$W/flags.alys"
run -f folded-stacks --value objects -o - "$W/flags.alys"
[ $RC -eq 0 ] && clean_run && [ "$(err_lines)" -eq 0 ] &&
		grep -qx "\[truncated\];make_widget 1" "$W/out" &&
		grep -qx "main;\[anon\] 1" "$W/out"
check_status "folded: a truncated stack has a [truncated] root, an anonymous frame is [anon], no warning" $?
run -f folded-stacks --depth 1 -o - "$W/flags.alys"
[ $RC -eq 0 ] && ! grep -q truncated "$W/out"
check_status "folded --depth 1: cut by the converter, no [truncated] root" $?
run -o - "$W/flags.alys"
[ $RC -eq 0 ] && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
ok = [s.get(\"truncated\") for s in d[\"stacks\"]] == [True, None] and [m.get(\"anon\") for m in d[\"mappings\"]] == [None, True]
sys.exit(not ok)" "$W/out"
check_status "json: truncated and anon keys" $?
{
	header
	echo "stackf str 1 0x1"
	echo "end exit 0 0 0"
} | "$W/gen" >"$W/badflags.alys"
run -o - "$W/badflags.alys"
[ $RC -eq 1 ] && err_has "stack flags"
check_status "stack flags of the wrong type are fatal" $?

# many_events PAIRS: a version 2 trace of PAIRS allocations each freed at
# once, over 64 addresses and 3 stacks: few live blocks, many events, in
# compressed blocks of 10,000 records as alys-bpf writes them (the mapped
# file's pages count in the peak RSS too)
many_events() {
	python3 - "$1" "$START" <<'PY'
import sys
pairs, start = int(sys.argv[1]), int(sys.argv[2])
w = sys.stdout.write
w(f"header alys-bpf 2 4242 /nonexistent {start}\n")
w("nodes 1 0 0 0x1000 0x2000 0x3000\nnodes 4 2 0 0x4000\n")
for i in range(pairs):
    a, ts = 0x10000 + (i % 64) * 64, start + 10 * i
    if i % 5000 == 0:
        w("block\n")
    w(f"event 1 {ts} 7 48 {a:#x} 0 0 {3 if i % 3 else 4} 48 1\nevent 4 {ts + 5} 7 0 {a:#x} 0 0 3 0 1\n")
    if i % 5000 == 4999 or i == pairs - 1:
        w("endblock\n")
w(f"end exit 0 {start + 10 * pairs} {2 * pairs}\n")
PY
}
# peak_kb FORMAT TRACE: the converter's peak RSS
peak_kb() {
	/usr/bin/time -f %M -o "$W/peak" "$CONV" -q --no-symbols -f "$1" -o /dev/null "$2" &&
		cat "$W/peak"
}
memory_bounded() {
	local small big
	many_events 50000 | "$W/gen" >"$W/ev-small.alys" &&
		many_events 500000 | "$W/gen" >"$W/ev-big.alys" || return 1
	for fmt in report pprof folded-stacks json; do
		small=$(peak_kb "$fmt" "$W/ev-small.alys") && big=$(peak_kb "$fmt" "$W/ev-big.alys") ||
			return 1
		echo "# -f $fmt: peak $small KB at 100K events, $big KB at 1M"
		# keeping the 900K more events would take > 55 MB
		[ $((big - small)) -lt 8192 ] || return 1
	done
	run -f report -o - "$W/ev-big.alys"
	grep -q "in 500000 allocation events; 500000 frees" "$W/out"
}
# ASan's quarantine keeps freed memory a while: not the converter's growth
ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=1 \
	check "memory grows with live blocks and stacks, not with events (100K vs 1M events)" memory_bounded

if command -v crystal >/dev/null; then
	check "crystal binary: names as Crystal prints them, symbols beside them, file:line from its DWARF" crystal_test
else
	echo "ok - crystal binary # SKIP crystal not installed"
fi

summary
