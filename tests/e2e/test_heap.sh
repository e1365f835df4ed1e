#!/usr/bin/env bash
# End-to-end: alys-bpf --heap-snapshot --pid and alys_converter -f heap
# (issue 14). tests/programs/heap_graph.cr holds a known graph: the
# constant REG, a Registry of N Nodes, each holding an Array of M Leaf
# objects; as many Leafs again are garbage; F fibers wait, each holding 10
# FiberLeafs on its stack only. The snapshot, taken while the program
# sleeps, must find exactly N*M reachable Leafs, N Nodes and F*10
# FiberLeafs and the one object held by memory given to GC_add_roots, the
# Registry must retain what it holds (the objects, and the
# arrays' buffers within the collector's size rounding), the path to it
# must start at REG, and the program must keep running. Shared libgc.so and
# static libgc.a.
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T

N=100
M=10
F=5

# row FILE TYPE FIELD: a field of TYPE's row in the -f heap table (columns
# apart by two spaces or more; type names hold single ones).
row() {
	sed -n '/^type /,/^$/p' "$1" | awk -F '  +' -v t="$2" -v f="$3" '$1 == t { print $f }'
}

reg_line=$(grep -n '^REG = Registry.new' "$ALYS_ROOT/tests/programs/heap_graph.cr" | cut -d: -f1)
# heap_graph-mt, heap_graph-d13mt (Crystal 1.14): on the multi-threaded
# scheduler, four threads, 50 fibers
mt=; sanitized "$BIN" || mt="heap_graph-mt heap_graph-d13mt"
for v in heap_graph heap_graph-static $mt $(gc_matrix heap_graph); do
	F=5
	[[ $v = *mt ]] && F=50
	CRYSTAL_WORKERS=4 "$ALYS_PROGS/$v" $N $M 4 $F register >"$T/$v.out" 2>&1 &
	tp=$!
	for _ in $(seq 100); do grep -q '^READY' "$T/$v.out" && break; sleep 0.05; done
	# threaded: -Dpreview_mt, and Crystal 1.21's default runtime (its
	# execution contexts start threads of their own)
	threads=$(ls "/proc/$tp/task" | wc -l)
	"$BIN/alys-bpf" --heap-snapshot --pid $tp -o "$T/$v.alys" 2>"$T/$v.err"
	check_eq "$v: snapshot taken" "$?" 0
	check_match "$v: says how long the process was stopped, and how many fiber stacks it copied" \
		"$(cat "$T/$v.err")" "heap snapshot of pid $tp: [0-9]+ blocks .* and [0-9]+ fibers \\([0-9]+ suspended: their stacks\\); stopped [0-9.]+ ms; written to"
	listed=$(sed -n 's/.* and \([0-9]*\) fibers (\([0-9]*\) suspended.*/\1/p' "$T/$v.err")
	copied=$(sed -n 's/.* and \([0-9]*\) fibers (\([0-9]*\) suspended.*/\2/p' "$T/$v.err")
	check_eq "$v: the fibers are the runtime's own list: as many as the program counts" \
		"FIBERS $listed" "$(grep '^FIBERS' "$T/$v.out")"
	check_ge "$v: every holding fiber's stack copied ($copied of $listed)" "${copied:-0}" $F
	check_le "$v: no more stacks than fibers" "${copied:-0}" "${listed:-0}"
	wait $tp
	check_eq "$v: the program kept running after the snapshot" \
		"$(grep '^ALIVE' "$T/$v.out")" "ALIVE $N $((N * M)) $((F * 10))"
	"$BIN/alys_converter" -q -f heap -o "$T/$v.heap" "$T/$v.alys"
	check_eq "$v: converted" "$?" 0
	check_eq "$v: the trace holds as many fiber roots as stacks copied (no heap block as a stack)" \
		"$(sed -n 's/^Roots by kind:.* fiber \([0-9]*\),.*/\1/p' "$T/$v.heap")" "${copied:-x}"
	check_eq "$v: exactly N*M Leafs reachable (as many are garbage)" "$(row "$T/$v.heap" Leaf 2)" \
		$((N * M))
	check_eq "$v: exactly N Nodes reachable" "$(row "$T/$v.heap" Node 2)" $N
	check_eq "$v: exactly F*10 FiberLeafs reachable: suspended fibers' stacks are roots" \
		"$(row "$T/$v.heap" FiberLeaf 2)" $((F * 10))
	# blocks without a type id, named by what holds them: each Node's
	# Array(Leaf) has one buffer, the registry's Array(Node) one
	check_eq "$v: N Array(Leaf) buffers, named by the arrays holding them" \
		"$(row "$T/$v.heap" "Array(Leaf) buffer" 2)" $N
	check_eq "$v: one Array(Node) buffer" "$(row "$T/$v.heap" "Array(Node) buffer" 2)" 1
	check_eq "$v: no 'no type id' row among the top 10 types by retained bytes" \
		"$(sed -n '/^type /,/^$/p' "$T/$v.heap" | sed -n 2,11p | grep -c 'no type id')" 0
	check_eq "$v: the object held only by memory given to GC_add_roots is reachable" \
		"$(row "$T/$v.heap" RootedThing 2)" 1
	"$BIN/alys_converter" -q -f heap-graph --type RootedThing -o "$T/$v-reg.mmd" "$T/$v.alys"
	check_match "$v: ... from the registered root" "$(cat "$T/$v-reg.mmd")" \
		'\(\["registered 0x[0-9a-f]+ \+0"\]\) --> n[0-9]+\["RootedThing@'
	check_le "$v: libgc's own data, which it registers too, is not copied as a root" \
		"$(sed -n 's/^Roots by kind:.* registered \([0-9]*\)$/\1/p' "$T/$v.heap")" 1
	check_ge "$v: ... the program's own is" \
		"$(sed -n 's/^Roots by kind:.* registered \([0-9]*\)$/\1/p' "$T/$v.heap")" 1
	check_eq "$v: one Registry" "$(row "$T/$v.heap" Registry 2)" 1
	# The graph's shape (what dominates what, the paths to the Leafs) is
	# checked on the single-threaded builds: with several threads, stale
	# words on their stacks hold parts of the graph too, as the collector
	# sees them, and dominate them. The threaded builds are for their fibers.
	graphs="$v-fiber"
	if ((threads == 1)); then
	graphs="$v $v-fiber"
	# What the Registry holds: itself, its Array(Node) and that array's
	# buffer (N pointers, capacity at most doubled by growth, and the
	# collector's size class at most a third above the request: 2 KiB for
	# 192 pointers), N Nodes, their Array(Leaf)s and buffers (exactly M
	# pointers each, the size class at most 16 bytes above M * 8 + 1), N*M
	# Leafs.
	typed=0
	for ty in Registry 'Array(Node)' Node 'Array(Leaf)' Leaf; do
		typed=$((typed + $(row "$T/$v.heap" "$ty" 3)))
	done
	kept=$(row "$T/$v.heap" Registry 4)
	check_ge "$v: Registry retains what it holds ($kept bytes; $typed in typed objects)" \
		"$kept" $((typed + N * 8 + N * M * 8))
	check_le "$v: ... and no more than the arrays' buffers add" \
		"$kept" $((typed + 2 * N * 8 * 4 / 3 + 16 + N * (M * 8 + 16)))
	check_match "$v: the biggest retainer is the Registry, found from the constant REG, named where it is defined (heap_graph.cr:$reg_line)" \
		"$(sed -n '/^Top retaining/,$p' "$T/$v.heap" | sed -n 2,3p | tr '\n' ' ' | tr -s ' ')" \
		"^ ?1 $kept bytes retained Registry@0x[0-9a-f]+ REG \\(constant, heap_graph\\.cr:$reg_line\\) -> Registry@0x[0-9a-f]+ \$"
	check_match "$v: the stop time is kept in the trace" "$(sed -n 1p "$T/$v.heap")" \
		"^Heap snapshot of pid $tp \\(.*$v\\): stopped [0-9.]+ ms"
	# The mermaid graph of the paths to 3 leaves: from the constant through
	# the registry, its nodes array, a node and its leaves array.
	"$BIN/alys_converter" -q -f heap-graph --type Leaf --limit 3 -o "$T/$v.mmd" "$T/$v.alys"
	check_eq "$v: heap-graph converted" "$?" 0
	check_eq "$v: heap-graph: 3 leaves drawn (--limit 3)" \
		"$(grep -o 'n[0-9]*\["Leaf@0x[0-9a-f]*"\]' "$T/$v.mmd" | sort -u | wc -l)" 3
	# edges as "FROM_TYPE +OFF TO_TYPE" (a root by its name, no offset)
	"$ALYS_PYTHON" - "$T/$v.mmd" >"$T/$v.edges" <<'PY'
import re, sys
label, edges = {}, []
node = r'(\w+)(?:\(\["(.*?)"\]\)|\["(.*?)"\])?'
for line in open(sys.argv[1]):
    m = re.match(r'\s*' + node + r' -->(?:\|\+(\d+)\|)? ' + node + r'\s*$', line)
    if not m:
        continue
    a, a1, a2, off, b, b1, b2 = m.groups()
    for n, l in ((a, a1 or a2), (b, b1 or b2)):
        if l:
            label[n] = re.sub(r'@0x[0-9a-f]+$', '', l)
    edges.append((a, off, b))
for a, off, b in edges:
    print(label.get(a, a), "+" + off if off else "", label.get(b, b))
PY
	for step in "REG (constant, heap_graph.cr:$reg_line)  Registry" "Registry +8 Array(Node)" \
		"Node +8 Array(Leaf)" "Array(Leaf) +16 Array(Leaf) buffer"; do
		check "$v: heap-graph: the path holds $step" grep -qxF "$step" "$T/$v.edges"
	done
	check_match "$v: heap-graph is a mermaid flowchart, wrapping labels at 400 px" \
		"$(sed -n '1,/^flowchart/p' "$T/$v.mmd" | tr '\n' ' ')" \
		'^---  ?config:   flowchart:     wrappingWidth: 400 --- %% .* flowchart LR $'
	fi
	"$BIN/alys_converter" -q -f heap-graph --type FiberLeaf --limit 1 -o "$T/$v-fiber.mmd" "$T/$v.alys"
	# the fiber waits at wake.receive, in the proc spawned in start_holders
	wait_line=$(grep -n 'wake.receive' "$ALYS_ROOT/tests/programs/heap_graph.cr" | cut -d: -f1)
	proc_line=$(grep -n 'spawn do' "$ALYS_ROOT/tests/programs/heap_graph.cr" | cut -d: -f1)
	check_match "$v: heap-graph: a fiber's stack root named by where it waits (heap_graph.cr:$wait_line) in the spawned proc, named after start_holders (heap_graph.cr:$proc_line)" \
		"$(cat "$T/$v-fiber.mmd")" "\\(\\[\"fiber 0x[0-9a-f]+ stack \\+[0-9]+ at heap_graph\\.cr:$wait_line in start_holders \\(proc at heap_graph\\.cr:$proc_line\\)\"\\]\\)"
	# as a reader sees it: mermaid (npm) in chromium draws every node,
	# objects on one line, roots on at most three
	for g in $graphs; do
		browsers_for "$BIN" || break
		"$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/mermaid_in_browser.py" \
			"$ALYS_WEB_TOOLS/node_modules/mermaid/dist/mermaid.min.js" "$T/$g.mmd" "$T/$g.png" \
			>"$T/$g.browser" 2>&1
		check_eq "$g.mmd: the browser ran" "$?:$(grep -c '^ok' "$T/$g.browser")" "0:6"
		browser_checks "$g.mmd: mermaid" "$T/$g.browser"
	done
	check_eq "$v: heap-graph converted in / names the proc the same (its source found from the program's directory)" \
		"$(cd / && "$BIN/alys_converter" -q -f heap-graph --type FiberLeaf --limit 1 -o - "$T/$v.alys" | cmp - "$T/$v-fiber.mmd" && echo same)" same
	((threads == 1)) || continue
	"$BIN/alys_converter" -q -f heap-graph --type Leaf --limit 3 --depth 2 -o - "$T/$v.alys" \
		>"$T/$v-d2.mmd"
	check_match "$v: heap-graph --depth 2: paths cut two steps from the leaves" \
		"$(cat "$T/$v-d2.mmd")" 'cut[0-9]+\["\.\.\."\] --> n[0-9]+'
	check_eq "$v: heap-graph --depth 2: no root" "$(grep -c 'REG' "$T/$v-d2.mmd")" 0
done

# A launched command: SIGUSR1 to alys-bpf takes a snapshot into its trace.
"$BIN/alys-bpf" -o "$T/launched.alys" -- "$ALYS_PROGS/heap_graph" $N $M 3 \
	>"$T/launched.out" 2>"$T/launched.err" &
ap=$!
for _ in $(seq 100); do grep -q '^READY' "$T/launched.out" 2>/dev/null && break; sleep 0.05; done
kill -USR1 $ap
wait $ap
check_eq "launched: traced to the end" "$?" 0
check_match "launched: SIGUSR1 took a snapshot" "$(cat "$T/launched.err")" \
	'heap snapshot of pid [0-9]+: .* stopped [0-9.]+ ms; written to'
check_eq "launched: the program kept running" "$(grep '^ALIVE' "$T/launched.out")" "ALIVE $N $((N * M)) 0"
"$BIN/alys_converter" -q -f heap -o "$T/launched.heap" "$T/launched.alys"
check_eq "launched: exactly N*M Leafs reachable in the trace's snapshot" \
	"$(row "$T/launched.heap" Leaf 2)" $((N * M))
# libgc's own data (its free lists) is no root, however the program names
# the library: as much is reachable as in the --pid snapshot, give or take.
reached() { sed -n 's/^Reachable from the roots: \([0-9]*\) objects.*/\1/p' "$1"; }
check_le "launched: no more reachable than attached ($(reached "$T/launched.heap") vs $(reached "$T/heap_graph.heap"))" \
	$((100 * $(reached "$T/launched.heap"))) $((105 * $(reached "$T/heap_graph.heap")))
"$BIN/alys_converter" -q -f json -o "$T/launched.json" "$T/launched.alys"
check_ge "launched: the events are in the same trace" \
	"$(json_query "$T/launched.json" "len(events)")" $((2 * N * M))

# Usage errors and a trace without a snapshot.
out=$("$BIN/alys_converter" -f heap-graph -o - "$T/heap_graph.alys" 2>&1)
check_eq "-f heap-graph without --type: usage error" "$?" 2
check_match "-f heap-graph without --type: says to give one" "$out" 'give --type NAME'
out=$("$BIN/alys_converter" -f heap --limit 3 -o - "$T/heap_graph.alys" 2>&1)
check_eq "-f heap --limit: refused" "$?" 2
out=$("$BIN/alys-bpf" --heap-snapshot -- true 2>&1)
check_eq "--heap-snapshot with a command: usage error" "$?" 2
check_match "--heap-snapshot with a command: says to give --pid" "$out" 'give --pid PID'
sleep 0.1 &
gone=$!
wait $gone
out=$("$BIN/alys-bpf" --heap-snapshot --pid $gone -o "$T/gone.alys" 2>&1)
check_eq "--heap-snapshot of a pid that is gone: error" "$?" 1
check_match "--heap-snapshot of a pid that is gone: says so" "$out" "no process with pid $gone"
"$BIN/alys-bpf" -q -o "$T/plain.alys" -- "$ALYS_PROGS/alloc_known" >/dev/null 2>&1
"$BIN/alys_converter" -q -f heap -o "$T/plain.heap" "$T/plain.alys" 2>"$T/plain.err"
check_match "-f heap on a trace without a snapshot: says how to take one" \
	"$(cat "$T/plain.heap" "$T/plain.err")" 'alys-bpf --heap-snapshot --pid PID'

summary
