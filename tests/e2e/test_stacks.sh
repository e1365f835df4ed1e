#!/usr/bin/env bash
# End-to-end: no stack is lost at any size (issue 11).
#   - 320,000 distinct stacks (tests/programs/many_stacks.cr: recursion whose
#     depth and path follow the data; 80,000 on the sanitizers' build), each
#     visited twice far apart, traced with default settings: fewer than 0.1%
#     of events without a stack, and the count per distinct stack equal to
#     the program's own.
#   - A kernel stack cache far smaller than the stacks: still exact, stacks
#     are sent again (counted), not lost.
#   - Stacks deeper than the frame limit end in a [truncated] root frame.
#   - Code in anonymous memory and memfds: [anon] frames, no warnings.
#   - Compiler-sized stacks (tests/programs/deep_stacks.cr, --release: 131,072
#     distinct stacks ~108 frames deep): every count exact, none without a
#     stack, and the prefix tree writes a small share of the frames (issue 19),
#     also through a tiny kernel cache.
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T
PROG=$ALYS_PROGS/many_stacks
# The unwinder's exactness is checked on whole stacks as the binary names
# them: every frame (the allocator's too), symbols, one count per event.
RAW=(--full-names --keep-allocator-frames --value objects)
# The sanitizers' build runs the same BPF programs, slower: it traces a
# quarter of the stacks, through a cache small enough to evict as many
# (exactness at full scale, and reused walks against walked ones, are the
# kernel's: checked on the plain build).
if sanitized "$BIN"; then
	PATHS=80000 MANY_OPT=(--stack-cache 131072)
else
	PATHS=320000 MANY_OPT=()
fi

# counter FILE.alys NAME: a counter of the trace (JSON of no event, made
# once per trace: reading a big one takes seconds, more under ASan).
counter() {
	local json=$1.counters.json
	[ -s "$json" ] || "$BIN/alys_converter" -q -f json --time 0s..1ns -o "$json" "$1" ||
		return
	json_query "$json" "counters.get('$2', -1)"
}

# truth NAME [CHECKER]: CHECKER's (default stacks_truth.py) key=value lines
# for $T/NAME.folded, as variables truth_paths, truth_stacks, truth_exact, ...
truth() {
	local k v
	for k in paths stacks exact wrong extra events lost; do unset "truth_$k"; done
	while IFS== read -r k v; do
		printf -v "truth_$k" '%s' "$v"
	done < <("$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/${2:-stacks_truth.py}" "$T/$1.folded" "$T/$1.truth")
}

# --- 320,000 distinct stacks (80,000 sanitized), default settings ---------
"$BIN/alys-bpf" "${MANY_OPT[@]}" -o "$T/many.alys" -- "$PROG" paths $PATHS "$T/many.truth" \
	>"$T/many.out" 2>"$T/many.err"
check_eq "many: traced" "$?" 0
check_eq "many: the program allocated" "$(cat "$T/many.out")" "PATHS=$PATHS ALLOCS=$((3 * PATHS - 1))"
check_match "many: no warning" "$(grep -c 'warning' "$T/many.err")" '^0$'
"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/many.folded" "$T/many.alys"
check_eq "many: converted" "$?" 0
truth many
check_ge "many: at least 15/16 of $PATHS distinct stacks through leaf" "${truth_stacks:-0}" $((PATHS * 15 / 16))
check_eq "many: every path has the count the program made" "${truth_exact:-}" $PATHS
check_eq "many: no path miscounted" "${truth_wrong:-}" 0
check_eq "many: no stack that the program has no path for" "${truth_extra:-}" 0
check_le "many: fewer than 0.1% of events without a stack (${truth_lost:-?} of ${truth_events:-?})" \
	$((${truth_lost:-1} * 1000)) "${truth_events:-0}"
check_eq "many: no stack record lost" "$(counter "$T/many.alys" ringbuf_drop_stack)" 0
resent=$(counter "$T/many.alys" stack_resent)
# The default cache (1M keys, two-way) holds most of 320,000 stacks' keys:
# ~78,000 of the second visits find theirs overwritten (~120,000 with the
# 256K-key LRU cache before it); 128K keys for 80,000: ~43,000.
check_ge "many: stacks evicted from the kernel's cache were sent again ($resent)" "$resent" 20000
check_eq "many: no 64-bit key collision" "$(counter "$T/many.alys" stack_collision)" 0
check_eq "many: sent = distinct + resent" "$(counter "$T/many.alys" stack_sent)" \
	$(($(grep -Eo '[0-9]+ stacks' "$T/many.err" | grep -Eo '^[0-9]+') + resent))

# --- a tiny kernel cache: every stack is sent again, none lost -------------
"$BIN/alys-bpf" -q --stack-cache 1024 -o "$T/tiny.alys" -- "$PROG" paths 20000 "$T/tiny.truth" >/dev/null
check_eq "tiny cache: traced" "$?" 0
"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/tiny.folded" "$T/tiny.alys"
truth tiny
check_eq "tiny cache: every path exact" "${truth_exact:-}" 20000
check_eq "tiny cache: no event without a stack" "${truth_lost:-}" 0
check_ge "tiny cache: resent at least once per path" "$(counter "$T/tiny.alys" stack_resent)" 19000
out=$("$BIN/alys-bpf" --stack-cache 10 -- true 2>&1)
check_eq "--stack-cache 10: refused, exit 2" "$?" 2
check_match "--stack-cache 10: says the range" "$out" 'takes a number of stacks from 1024 to 16777216'

# --- compiler-sized stacks: a prefix tree ---------------------------------
DEEP=$ALYS_PROGS/deep_stacks-release
caches="default 1024"
DEEP_OPT=()
# The daemon's side: every node sent again. The sanitized daemon drains the
# ring buffer a few times slower than the release program fills it; on a busy
# machine 64 MiB filled once (3,045 events lost): it gets four times the room.
sanitized "$BIN" && caches=1024 DEEP_OPT=(--ringbuf-size 256M)
for cache in $caches; do
	opt=("${DEEP_OPT[@]}")
	[ $cache = default ] || opt+=(--stack-cache $cache)
	"$BIN/alys-bpf" "${opt[@]}" -o "$T/d$cache.alys" -- "$DEEP" 65536 100 2 "$T/d$cache.truth" \
		>"$T/d$cache.out" 2>"$T/d$cache.err"
	check_eq "deep stacks, cache $cache: traced" "$?" 0
	check_match "deep stacks, cache $cache: the program allocated" "$(cat "$T/d$cache.out")" \
		'^PATHS=65536 DEPTH=100 ALLOCS=262144 '
	check_eq "deep stacks, cache $cache: no warning" "$(grep -c 'warning' "$T/d$cache.err")" 0
	"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/d$cache.folded" "$T/d$cache.alys"
	check_eq "deep stacks, cache $cache: converted" "$?" 0
	truth d$cache deep_truth.py
	check_eq "deep stacks, cache $cache: 131,072 distinct stacks through leaf" "${truth_stacks:-}" 131072
	check_eq "deep stacks, cache $cache: every stack's count exact" "${truth_exact:-}" 131072
	check_eq "deep stacks, cache $cache: none miscounted, none extra" "${truth_wrong:-}/${truth_extra:-}" 0/0
	check_eq "deep stacks, cache $cache: no event without a stack" "${truth_lost:-}" 0
	for c in stack_collision stack_orphan stack_unknown ringbuf_drop_stack; do
		check_eq "deep stacks, cache $cache: $c 0" "$(counter "$T/d$cache.alys" $c)" 0
	done
	# ~108 frames a stack written whole would be 14M; the tree writes each
	# path's own frames once (~11 + the leaf's few), its two stacks sharing them
	nodes=$(counter "$T/d$cache.alys" stack_nodes)
	check_le "deep stacks, cache $cache: at most 12 frames written per distinct stack ($nodes nodes)" \
		"$nodes" $((12 * 131072 + 2000))
	check_ge "deep stacks, cache $cache: and at least the 10 a path has of its own ($nodes)" \
		"$nodes" $((5 * 131072))
done
check_ge "deep stacks, cache 1024: evicted prefixes were sent again" \
	"$(counter "$T/d1024.alys" stack_resent)" 60000

# --- deeper than the frame limit ---------------------------------------------
# frames (names) of the one deep_rec line of a folded file, and its count
deep_line() {
	grep -F 'deep_rec' "$1" | "$ALYS_PYTHON" -c '
import sys
for l in sys.stdin:
    s, _, n = l.rstrip("\n").rpartition(" ")
    f = s.split(";")
    print(f[0], len(f), n)'
}
"$BIN/alys-bpf" -q -o "$T/deep.alys" -- "$PROG" deep 200 50 >/dev/null
"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/deep.folded" "$T/deep.alys"
check_eq "deep 200: default depth 127, root [truncated] (root, frames, count)" \
	"$(deep_line "$T/deep.folded")" "[truncated] 128 50"
check_eq "deep 200: stack_truncated counts the 50 cut walks" "$(counter "$T/deep.alys" stack_truncated)" 50
"$BIN/alys_converter" -q -f json -o "$T/deep.json" "$T/deep.alys"
check_eq "deep 200: JSON marks the stack truncated, 127 recorded frames" \
	"$(json_query "$T/deep.json" "sorted(set((e.get('truncated'), len(e['stack'])) for e in events if in_stack(e, 'deep_rec')))")" \
	'[[true, 127]]'
"$BIN/alys_converter" -q -f flamegraph -o "$T/deep.svg" "$T/deep.alys"
check_match "deep 200: the flamegraph has a [truncated] root" "$(grep -c '\[truncated\]' "$T/deep.svg")" '^[1-9]'
"$BIN/alys_converter" -q -f pprof -o "$T/deep.pb.gz" "$T/deep.alys"
check_match "deep 200: pprof has a [truncated] function" \
	"$(gzip -dc "$T/deep.pb.gz" | grep -c -a '\[truncated\]')" '^[1-9]'
"$BIN/alys-bpf" -q -o "$T/deep100.alys" -- "$PROG" deep 100 50 >/dev/null
"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/deep100.folded" "$T/deep100.alys"
check_match "deep 100: whole stack, from _start, not truncated" "$(deep_line "$T/deep100.folded")" '^_start [0-9]+ 50$'
check_eq "deep 100: stack_truncated 0" "$(counter "$T/deep100.alys" stack_truncated)" 0
"$BIN/alys-bpf" -q --max-frames 20 -o "$T/deep20.alys" -- "$PROG" deep 100 50 >/dev/null
"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/deep20.folded" "$T/deep20.alys"
check_eq "--max-frames 20: [truncated] root above 20 frames" "$(deep_line "$T/deep20.folded")" "[truncated] 21 50"

# --- reusing the last walk: the same stacks as walking every frame --------
# A walk checks the frames the thread's last walk shares with it instead of
# walking them (bpf/unwind_dwarf.h). Stacks must not change: the same programs traced with every frame walked
# (ALYS_BPF_NO_REUSE) fold to the same file. Frame limits that cut them
# part the cases: whole stacks (default); all cut, consecutive ones one frame
# shorter or longer below what they share (leaf's stack and buf's, 60); some
# cut and some not (108); depths that follow the data (many_stacks); one
# stack again and again, cut (same-cut60).
# same_stacks NAME PROGRAM-ARGS... -- ALYS-OPTIONS...
same_stacks() {
	local name=$1 args=() opt=() r
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	opt=("$@")
	for r in reuse copy walk; do
		ALYS_BPF_NO_REUSE=$([ $r = walk ] && echo 1) \
		ALYS_BPF_NO_DIRECT_MAP=$([ $r = copy ] && echo 1) \
			"$BIN/alys-bpf" -q "${opt[@]}" -o "$T/$name.$r.alys" -- "${args[@]}" >/dev/null
		"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/$name.$r.folded" "$T/$name.$r.alys"
	done
	check_ge "reuse, $name: frames checked in place, not walked ($(counter "$T/$name.reuse.alys" frames_reused))" \
		"$(counter "$T/$name.reuse.alys" frames_reused)" 1000
	check_eq "reuse, $name: none with ALYS_BPF_NO_REUSE" "$(counter "$T/$name.walk.alys" frames_reused)" 0
	check_ge "reuse, $name: the last walk's span read at the start ($(counter "$T/$name.reuse.alys" stack_spans_read))" \
		"$(counter "$T/$name.reuse.alys" stack_spans_read)" 1000
	check_ge "reuse, $name: copied in one read with ALYS_BPF_NO_DIRECT_MAP ($(counter "$T/$name.copy.alys" stack_spans_read))" \
		"$(counter "$T/$name.copy.alys" stack_spans_read)" 1000
	check_eq "reuse, $name: none mapped with ALYS_BPF_NO_DIRECT_MAP" "$(counter "$T/$name.copy.alys" stack_spans_mapped)" 0
	check_eq "reuse, $name: copied, the same stacks and counts" \
		"$(diff "$T/$name.copy.folded" "$T/$name.walk.folded" | head -5)" ""
	check_eq "reuse, $name: no span read with ALYS_BPF_NO_REUSE" "$(counter "$T/$name.walk.alys" stack_spans_read)" 0
	# whatever the frame numbers where they meet (the cut cases part them
	# by one), a walk checks the last one's frames where they lie
	check_ge "reuse, $name: walks that met the last one, checked in place ($(counter "$T/$name.reuse.alys" walks_in_place))" \
		"$(counter "$T/$name.reuse.alys" walks_in_place)" 1000
	check_eq "reuse, $name: no walk in place with ALYS_BPF_NO_REUSE" "$(counter "$T/$name.walk.alys" walks_in_place)" 0
	check_eq "reuse, $name: the same stacks and counts ($(wc -l <"$T/$name.walk.folded") stacks)" \
		"$(diff "$T/$name.reuse.folded" "$T/$name.walk.folded" | head -5)" ""
	check_eq "reuse, $name: the same truncated ones ($(grep -c '^\[truncated\]' "$T/$name.walk.folded"))" \
		"$(grep -c '^\[truncated\]' "$T/$name.reuse.folded")" "$(grep -c '^\[truncated\]' "$T/$name.walk.folded")"
}
if ! sanitized "$BIN"; then
	same_stacks deep "$DEEP" 4096 100 2 --
	# its frames ~24 bytes: a span is cheaper copied than checked where
	# it lies (bpf/unwind_dwarf.h, ALYS_MAP_FRAME_BYTES)
	check_le "deep: spans of small frames copied, not mapped ($(counter "$T/deep.reuse.alys" stack_spans_mapped) of $(counter "$T/deep.reuse.alys" stack_spans_read))" \
		"$(counter "$T/deep.reuse.alys" stack_spans_mapped)" 1000
	same_stacks deep-cut60 "$DEEP" 4096 100 2 -- --max-frames 60
	# The frames choose a cut stack's end, not the limit: buf's stacks are
	# one frame deeper than leaf's, so cut at the limit the chain of leaf's
	# callers recorded in one never is the one recorded in the other (0 of
	# 256); cut in the outermost 60/8 frames where the return addresses
	# choose, most are. Every cut stack holds 53 to 60 frames.
	"$BIN/alys_converter" -q -f json -o "$T/deep-cut60.json" "$T/deep-cut60.reuse.alys"
	cut=$("$ALYS_PYTHON" - "$T/deep-cut60.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
chains = {"leaf": set(), "buf": set()}
depths = set()
for s in d["stacks"]:
    if not s.get("truncated"):
        continue
    depths.add(sum(1 for f in s["frames"] if not f.get("inlined")))
    names = [f.get("name", "") for f in s["frames"]]
    i = next((i for i, n in enumerate(names) if n.startswith("leaf")), None)
    if i is None:
        continue
    kind = "buf" if any(n.startswith("buf") for n in names[:i]) else "leaf"
    chains[kind].add(tuple(f["ip"] for f in s["frames"][i + 1:]))
print(len(chains["leaf"]), len(chains["buf"]), len(chains["leaf"] & chains["buf"]),
      min(depths), max(depths))
PY
)
	read -r n_leaf n_buf n_shared d_min d_max <<<"$cut"
	check_eq "cut 60: 256 chains of leaf's callers in each of leaf's and buf's stacks" "$n_leaf $n_buf" "256 256"
	check_ge "cut 60: most of them cut at the same frame in both ($n_shared)" "$n_shared" 160
	check_ge "cut 60: cut stacks hold 53 frames or more ($d_min)" "$d_min" 53
	check_le "cut 60: and 60 at most ($d_max)" "$d_max" 60
	same_stacks deep-cut108 "$DEEP" 4096 100 2 -- --max-frames 108
	same_stacks paths "$PROG" paths 20000 /dev/null --
	# the same stack each time, cut at the limit: ends cut as the last did
	same_stacks same-cut60 "$PROG" deep 200 3000 -- --max-frames 60
	# a shallow stack and a 100 frames deeper one in turn: a walk meets the
	# last one's outer frames ~100 frames apart, moving its own frames
	# across those it will check in the ring
	same_stacks seesaw "$PROG" seesaw 100 3000 --
	check_eq "seesaw: 3,000 stacks with deep_rec once, 3,000 with it 101 times" \
		"$(awk '/deep_rec/ { print gsub(/deep_rec/, "") " " $NF }' "$T/seesaw.reuse.folded" | sort -n | tr '\n' ' ')" \
		"1 3000 101 3000 "
	# ~100 frames of ~1 KiB: the last walk's span, ~100 KiB, is past what
	# one read copies; read as far as it goes, the frames past it a word at
	# a time
	same_stacks bigframes "$PROG" bigframes 100 3000 --
	check_eq "bigframes: 1,000 stacks each with big_rec 101, 100 and 99 times" \
		"$(awk '/big_rec/ { print gsub(/big_rec/, "") " " $NF }' "$T/bigframes.reuse.folded" | sort -n | tr '\n' ' ')" \
		"99 1000 100 1000 101 1000 "
	check_ge "bigframes: frames past the span read a word at a time ($(counter "$T/bigframes.reuse.alys" stack_words_read))" \
		"$(counter "$T/bigframes.reuse.alys" stack_words_read)" 3000
	# frames of ~1 KiB: the spans read through the direct map, the ones
	# copied checked the same (the same folded file)
	check_ge "bigframes: spans read through the direct map ($(counter "$T/bigframes.reuse.alys" stack_spans_mapped))" \
		"$(counter "$T/bigframes.reuse.alys" stack_spans_mapped)" 3000
	check_ge "seesaw: the deep stack's spans mapped ($(counter "$T/seesaw.reuse.alys" stack_spans_mapped))" \
		"$(counter "$T/seesaw.reuse.alys" stack_spans_mapped)" 3000
	# a stack in a transparent huge page: one page-table entry (a PMD's)
	# maps the whole span
	same_stacks huge "$ALYS_PROGS/callchain-c" 3000 huge --
	check_eq "huge: the program's stack in a 2 MiB huge page (THP enabled: madvise or always)" \
		"$("$ALYS_PROGS/callchain-c" 10 huge | sed -n 's/^HUGE_KB=//p')" 2048
	check_eq "huge: 3,000 allocations 40 big_rec frames deep" \
		"$(awk '/big_rec/ { print gsub(/big_rec/, "") " " $NF }' "$T/huge.reuse.folded")" "40 3000"
	check_ge "huge: spans read through the huge page ($(counter "$T/huge.reuse.alys" stack_spans_mapped))" \
		"$(counter "$T/huge.reuse.alys" stack_spans_mapped)" 2900
	# -v says how the spans are read; a verifier that refuses the direct
	# map's loads (faked) gets the object loaded again, the spans copied
	v=$("$BIN/alys-bpf" -v -o "$T/dm-v.alys" -- "$PROG" bigframes 100 300 2>&1 >/dev/null)
	check_eq "direct map: -v says the stacks are read through it" \
		"$(grep -c 'stacks read through the direct map at 0xffff' <<<"$v")" 1
	# the loader in a pid namespace of its own (a container): it finds the
	# direct map all the same
	v=$(unshare --pid --fork --mount-proc "$BIN/alys-bpf" -v -o "$T/dm-ns.alys" -- \
		"$PROG" bigframes 100 30 2>&1 >/dev/null)
	check_eq "direct map: found by a loader in a pid namespace of its own" \
		"$(grep -c 'stacks read through the direct map at 0xffff' <<<"$v")" 1
	v=$(ALYS_BPF_REFUSE_DIRECT_MAP=1 "$BIN/alys-bpf" -v -o "$T/dm-refused.alys" -- \
		"$PROG" bigframes 100 300 2>&1 >/dev/null)
	check_eq "direct map refused: traced all the same" "$?" 0
	check_eq "direct map refused: -v says the stacks are copied" \
		"$(grep -c 'stack reads through the direct map unavailable: stacks are copied' <<<"$v")" 1
	# given up before the uprobe sessions, which this kernel has
	check_eq "direct map refused: the uprobe sessions kept" \
		"$(grep -c 'uprobe sessions unavailable' <<<"$v")" 0
	check_eq "direct map refused: none mapped" "$(counter "$T/dm-refused.alys" stack_spans_mapped)" 0
	check_ge "direct map refused: spans copied ($(counter "$T/dm-refused.alys" stack_spans_read))" \
		"$(counter "$T/dm-refused.alys" stack_spans_read)" 300
	for f in dm-v dm-refused; do
		"$BIN/alys_converter" -q -f folded-stacks "${RAW[@]}" -o "$T/$f.folded" "$T/$f.alys"
	done
	check_eq "direct map refused: the same stacks as mapped" \
		"$(diff "$T/dm-v.folded" "$T/dm-refused.folded" | head -5)" ""
	v=$(ALYS_BPF_NO_DIRECT_MAP=1 "$BIN/alys-bpf" -v -o "$T/dm-off.alys" -- "$PROG" bigframes 100 30 2>&1 >/dev/null)
	check_eq "direct map off: -v says the stacks are copied, and why" \
		"$(grep -c 'stacks copied, not read through the direct map (5-level paging, /proc/cpuinfo unreadable, or ALYS_BPF_NO_DIRECT_MAP set)' <<<"$v")" 1
else	# the daemon's and converter's side of reused frames, once
	same_stacks deep-cut108 "$DEEP" 1024 100 2 -- --max-frames 108
fi

# --- anonymous executable memory ---------------------------------------------
"$BIN/alys-bpf" -o "$T/jit.alys" -- "$ALYS_PROGS/jit_alloc" 1000 500 >"$T/jit.out" 2>"$T/jit.err"
check_eq "jit: traced" "$?" 0
check_eq "jit: no warning about files that are not files" "$(grep 'warning\|cannot read' "$T/jit.err")" ""
"$BIN/alys_converter" -q -f folded-stacks --value objects -o "$T/jit.folded" "$T/jit.alys"
check_eq "jit: the 1500 allocations from JIT code under [anon] (GC_malloc trimmed)" "$(grep -c -x '\[anon\] 1500' "$T/jit.folded")" 1
"$BIN/alys_converter" -q -f json -o "$T/jit.json" "$T/jit.alys"
check_eq "jit: anonymous and memfd mappings recorded as anonymous" \
	"$(json_query "$T/jit.json" "sorted(m['path'] for m in d['mappings'] if m.get('anon') and (m['path'] == '//anon' or m['path'].startswith('/memfd:alys-jit')))")" \
	'["//anon", "/memfd:alys-jit (deleted)"]'
check_eq "jit: no frame outside a known mapping" "$(counter "$T/jit.alys" unmapped_ip)" 0

check_all_pprof_valid "$T"
summary
