# bench/perf_probes.sh (sourced): perf uprobes on exactly the instructions
# alys-bpf probes. `perf probe FUNC+OFF` may also match a same-named PLT
# entry of the library and probe the middle of an instruction there, so the
# probes are placed by address.
#   perf_probes_add ALYS_BPF PROGRAM [ARGS...]   -> sets PERF_EVENTS
#   perf_probes_del
perf_probes_add() {
	local alys=$1 out lib f off base tmp
	shift
	tmp=$(mktemp /tmp/alys-probes.XXXXXX)
	out=$("$alys" -v --empty-probes -o "$tmp" -- "$@" 2>&1 >/dev/null)
	rm -f "$tmp"
	lib=$(printf '%s\n' "$out" | sed -n 's/.*libgc from \(.*\)$/\1/p; s/.*tracing pid [0-9]* (\(.*\)), libgc linked into the executable/\1/p' | head -n 1)
	PERF_EVENTS=
	perf probe -q -d 'probe_alys:*' >/dev/null 2>&1 || true
	for f in GC_malloc GC_malloc_atomic GC_realloc GC_free; do
		off=$(printf '%s\n' "$out" | sed -n "s/.*uprobe $f+\(0x[0-9a-f]*\) .*/\1/p" | head -n 1)
		base=$(nm -D --defined-only "$lib" 2>/dev/null | awk -v f=$f '$3 == f { print $1 }')
		[ -n "$base" ] || base=$(nm --defined-only "$lib" | awk -v f=$f '$3 == f { print $1 }')
		[ -n "$off" ] && [ -n "$base" ] || continue
		perf probe -q -x "$lib" -a "probe_alys:${f}=0x$(printf %x $((0x$base + off)))" >/dev/null
		PERF_EVENTS="$PERF_EVENTS${PERF_EVENTS:+,}probe_alys:$f"
	done
}

perf_probes_del() {
	perf probe -q -d 'probe_alys:*' >/dev/null 2>&1 || true
}
