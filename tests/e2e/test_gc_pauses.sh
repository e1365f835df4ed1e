#!/usr/bin/env bash
# End-to-end: the collector's stop-the-world pauses (issue 40), on
# tests/programs/gc_pauses.cr, whose truth is known:
#   explicit: 300000 small objects kept, then 8 GC.collect calls, each timed
#     by the program (Time.monotonic). Every collection is a pause, its
#     gc_no the next one's minus 1 (none missed, none twice); the 8 are told
#     apart as GC.collect's, in order, each collection within 10% or 100 us
#     of the time the program measured around its call, and its pause (the
#     world stopped) inside it;
#   sites: 100 MiB of garbage from two sites, 90% of the calls (and bytes)
#     from big_site, one size class: ~90% of the collections the
#     allocations trigger are big_site's (within 5 points), as the report,
#     the JSON and pprof --pauses say.
# Each event's collection number fits the pauses around it: below the next
# pause's, at least the last one's (tests/e2e/gc_no_order.py), with
# GC_gc_no read from the target once a collection, not once an event
# (attached with --pid: test_threads, whose servers allocate throughout).
# Launched, in every sampling mode, and --pid (attached while the program
# waits, before its collections); shared and static libgc, a
# release build, and the toolchain matrix (the official tarballs' clang
# libgc among them).
. "$(dirname "$0")/../lib.sh"
BIN=$(cd "${1:-$ALYS_BIN}" && pwd)
require_root_bpf
make_tmpdir T

# pauses NAME: "stop_ns dur_ns gc_no explicit site collection_ns" a line
# (collection_ns "-" when not measured), from the JSON
pauses() {
	"$BIN/alys_converter" -q -f json -o - "$T/$1.alys" | "$ALYS_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
st = {s["id"]: s for s in d["stacks"]}
for p in d["pauses"]:
    fr = [f.get("name", "") for f in st[p["stack_id"]]["frames"]] if p["stack_id"] in st else []
    ex = any(n in ("GC_gcollect", "GC_try_to_collect") for n in fr[:16])
    site = "big_site" if "big_site" in fr else "small_site" if "small_site" in fr else "-"
    c = p["collection_ns"]
    print(p["time_ns"], p["duration_ns"], p["gc_no"], int(ex), site, "-" if c is None else c)
'
}

# order_checks NAME MIN_EVENTS [MAX_READS]: each event's collection number
# against the pauses around it (gc_no_order.py), at least MIN_EVENTS of them
# judged, and with MAX_READS, GC_gc_no read from the target at most that
# often (once a collection: bpf/live.h, gc_no_at)
order_checks() {
	local v=$1 k val events=0 pauses=0 early=x late=x
	"$BIN/alys_converter" -q -f json -o "$T/$v.json" "$T/$v.alys"
	while IFS== read -r k val; do
		printf -v "$k" '%s' "$val"
	done < <("$ALYS_PYTHON" "$ALYS_ROOT/tests/e2e/gc_no_order.py" "$T/$v.json")
	check_ge "$v: events judged against the pauses ($events, $pauses pauses)" "$events" "$2"
	check_eq "$v: no event counts a collection that came after it, none misses one before it" \
		"$early/$late" 0/0
	[ -n "${3:-}" ] && check_le "$v: GC_gc_no read from the target once a collection, not once an event" \
		"$(json_query "$T/$v.json" "d['counters'].get('gc_no_reads', -1)")" "$3"
	rm -f "$T/$v.json"
}

# explicit_checks NAME: the program's own timings against the pauses
explicit_checks() {
	local v=$1 measured n_ex
	measured=$(sed -n 's/.*pause_us=\([0-9,]*\).*/\1/p' "$T/$v.out" | tr , ' ')
	pauses "$v" >"$T/$v.pauses"
	check_eq "$v: the program made its 8 GC.collect calls" "$(echo $measured | wc -w)" 8
	check_eq "$v: every collection one pause, none missed (gc_no consecutive)" \
		"$(awk 'NR > 1 && $3 != last + 1 { bad++ } { last = $3 } END { print bad + 0 }' "$T/$v.pauses")" 0
	n_ex=$(awk '$4 == 1' "$T/$v.pauses" | wc -l)
	check_eq "$v: 8 pauses told apart as GC.collect's" "$n_ex" 8
	# "pause_ns collection_ns measured_us" for each GC.collect
	awk '$4 == 1 { print $2, $6 }' "$T/$v.pauses" | paste -d' ' - <(printf '%s\n' $measured) \
		>"$T/$v.pairs"
	check_eq "$v: each GC.collect's collection measured (GC_try_to_collect_inner found)" \
		"$(awk '$2 == "-" { bad++ } END { print bad + 0 }' "$T/$v.pairs")" 0
	check_eq "$v: each collection within 10% or 100 us of what the program measured around GC.collect" \
		"$(awk '{ d = $2 / 1000 - $3; if (d < 0) d = -d } d > 100 && d > $3 / 10 { bad++; print "# " $0 > "/dev/stderr" } END { print bad + 0 }' "$T/$v.pairs")" 0
	check_eq "$v: each pause (the world stopped) inside its collection" \
		"$(awk '$1 > $2 { bad++ } END { print bad + 0 }' "$T/$v.pairs")" 0
	check_match "$v: the report's GC pauses section counts them" \
		"$("$BIN/alys_converter" -q -f report -o - "$T/$v.alys")" \
		"$(awk 'END { print NR }' "$T/$v.pauses") pauses, .* 8 asked for by GC.collect"
}

# sites_checks NAME: ~90% of the allocation-triggered pauses big_site's
sites_checks() {
	local v=$1 big small pb
	pauses "$v" >"$T/$v.pauses"
	big=$(awk '$4 == 0 && $5 == "big_site"' "$T/$v.pauses" | wc -l)
	small=$(awk '$4 == 0 && $5 == "small_site"' "$T/$v.pauses" | wc -l)
	check_ge "$v: collections triggered by the two sites: $big + $small" $((big + small)) 200
	check_le "$v: big_site's share of them within 5 points of 90%" \
		"$(awk -v b="$big" -v s="$small" 'BEGIN { d = b / (b + s) * 100 - 90; printf "%d", (d < 0 ? -d : d) }')" 5
	"$BIN/alys_converter" -q -f pprof --pauses -o "$T/$v.pb.gz" "$T/$v.alys"
	check_eq "$v: pprof --pauses written" "$?" 0
	check_pprof_valid "$v: pprof --pauses" "$T/$v.pb.gz"
	pb=$(pprof_query "$T/$v.pb.gz" 'types == ["gc_pauses", "gc_pause"] and total("gc_pauses") == '"$(wc -l <"$T/$v.pauses")"' and total("gc_pause") == '"$(awk '{ s += $2 } END { print s }' "$T/$v.pauses")")
	check_eq "$v: pprof --pauses: gc_pauses/count and gc_pause/nanoseconds, every pause in them" "$pb" 1
}

# The pauses come from the collector's own probes, whatever is sampled:
# refill sampling keeps each run ~3x shorter than tracing every allocation
# (the default full trace has its turn in the modes below). No liveness, so
# that the collections the program times are its own.
SAMPLE="--sample refill --no-liveness"
for v in gc_pauses gc_pauses-static gc_pauses-release $(gc_matrix gc_pauses); do
	"$BIN/alys-bpf" -q $SAMPLE -o "$T/$v.alys" -- "$ALYS_PROGS/$v" explicit 8 300000 \
		>"$T/$v.out" 2>"$T/$v.err"
	check_eq "$v explicit: traced" "$?" 0
	explicit_checks "$v"
	"$BIN/alys-bpf" -q $SAMPLE -o "$T/$v-s.alys" -- "$ALYS_PROGS/$v" sites 100 \
		>"$T/$v-s.out" 2>"$T/$v-s.err"
	check_eq "$v sites: traced" "$?" 0
	sites_checks "$v-s"
	order_checks "$v-s" 10000 $(($(wc -l <"$T/$v-s.pauses") + 2))
done

# --pid: attached to the running program, the truths hold the same.
v=pid-attached
"$ALYS_PROGS/gc_pauses" explicit-after "$T/go" 8 300000 >"$T/$v.out" 2>&1 &
prog=$!
on_exit "kill $prog 2>/dev/null"
wait_for_line "$T/$v.out" '^READY' 60
"$BIN/alys-bpf" -v --pid $prog -o "$T/$v.alys" 2>"$T/$v.err" &
tracer=$!
on_exit "kill $tracer 2>/dev/null"
wait_for_line "$T/$v.err" 'tracing pid' 60
check_status "--pid: attached" $?
touch "$T/go"
wait $prog
wait $tracer
check_eq "--pid: the tracer ended with the program" "$?" 0
explicit_checks "$v"

# Every mode: the pauses are there, two probe hits a collection.
for mode in "" "--sample bytes:64K" "--sample refill" "--census"; do
	v=mode$(echo "$mode" | tr -dc 'a-z0-9')
	"$BIN/alys-bpf" -q $mode -o "$T/$v.alys" -- "$ALYS_PROGS/gc_pauses" explicit 8 100000 \
		>"$T/$v.out" 2>"$T/$v.err"
	check_eq "${mode:-default}: traced" "$?" 0
	pauses "$v" >"$T/$v.pauses"
	check_eq "${mode:-default}: 8 pauses told apart as GC.collect's" \
		"$(awk '$4 == 1' "$T/$v.pauses" | wc -l)" 8
	check_eq "${mode:-default}: gc_no consecutive" \
		"$(awk 'NR > 1 && $3 != last + 1 { bad++ } { last = $3 } END { print bad + 0 }' "$T/$v.pauses")" 0
	# (--census records no allocation; bytes:64K ~500 of 700,000)
	[ "$mode" = --census ] || order_checks "$v" 300 $(($(wc -l <"$T/$v.pauses") + 2))
done
summary
