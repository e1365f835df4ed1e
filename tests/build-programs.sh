#!/usr/bin/env bash
# Build the end-to-end test programs of tests/programs/ into OUTDIR.
#
#   tests/build-programs.sh OUTDIR        (make check uses tests/build/programs)
#
# Produces, for every tests/programs/NAME.cr:
#   OUTDIR/NAME           crystal build (debug, links the shared libgc.so.1)
#   OUTDIR/NAME-release   crystal build --release (shared libgc.so.1), for
#                         the RELEASE_PROGRAMS only: a release build takes
#                         15-25 s of a CPU, and the others no test runs so
#                         (deep_stacks is built --release only)
# and for the STATIC_PROGRAMS also:
#   OUTDIR/NAME-static    crystal build, libgc linked statically (libgc.a):
#                         GC_malloc & co. live in the executable itself
# except for the MT_PROGRAMS (faults), built once, debug, with -Dpreview_mt:
#   OUTDIR/NAME           crystal build -Dpreview_mt (multi-threaded scheduler)
# and for tests/programs/callchain.c:
#   OUTDIR/callchain-c    cc -O2 -g -fomit-frame-pointer -fno-inline ... -lgc
#   OUTDIR/jit_alloc      cc -O2 -g ... -lgc (allocates from anonymous code)
#
# An output newer than its source (and than this script) is not rebuilt.
# Crystal's cache goes to OUTDIR/.crystal-cache unless CRYSTAL_CACHE_DIR is set.
# Set JOBS to limit parallel builds (default: number of CPUs, at most 4).
set -euo pipefail

die() { echo "build-programs: ERROR: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
OUTDIR=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRCDIR=$HERE/programs
SELF=$HERE/build-programs.sh

command -v crystal >/dev/null 2>&1 ||
	die "crystal is not installed (run scripts/setup-debian.sh as root)"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || die "C compiler '$CC' not found"

mkdir -p "$OUTDIR" "$OUTDIR/.logs"
OUTDIR=$(cd "$OUTDIR" && pwd)
export CRYSTAL_CACHE_DIR=${CRYSTAL_CACHE_DIR:-$OUTDIR/.crystal-cache}

# libgc.a alone in a directory: "-L$STATIC_GC_DIR" makes the linker find
# libgc.a there for Crystal's "-lgc" before it reaches the system libgc.so.
STATIC_GC_DIR=$OUTDIR/.static-gc
LIBGC_A=${LIBGC_A:-$(${CC} -print-file-name=libgc.a)}
[ -f "$LIBGC_A" ] || LIBGC_A=/usr/lib/x86_64-linux-gnu/libgc.a

STATIC_PROGRAMS="alloc_known sleeper liveness census sample_sites heap_graph"
MT_PROGRAMS="faults"
RELEASE_PROGRAMS="callchain census deep_stacks sample_sites sleeper"
RELEASE_ONLY="deep_stacks"

# is_mt NAME: NAME is built multi-threaded only.
is_mt() { [[ " $MT_PROGRAMS " == *" $1 "* ]]; }

# up_to_date OUT SRC: OUT exists and is newer than SRC and this script.
up_to_date() {
	[ -x "$1" ] && [ "$1" -nt "$2" ] && [ "$1" -nt "$SELF" ]
}

# build_one OUT SRC CMD...: run CMD unless OUT is up to date; log to
# OUTDIR/.logs/NAME.log.
build_one() {
	local out=$1 src=$2
	shift 2
	if up_to_date "$out" "$src"; then
		echo "  up to date  $(basename "$out")"
		return 0
	fi
	local t0=$SECONDS
	local log=$OUTDIR/.logs/$(basename "$out").log
	rm -f "$out"
	if ! "$@" >"$log" 2>&1; then
		echo "  FAILED      $(basename "$out"): $*" >&2
		sed 's/^/    | /' "$log" >&2
		return 1
	fi
	echo "  built       $(basename "$out") ($((SECONDS - t0)) s)"
}

# check_static OUT: libgc must be linked in, not loaded from libgc.so.
check_static() {
	local out=$1
	# (grep without -q: with pipefail, an early grep exit fails the pipe)
	if ldd "$out" | grep 'libgc\.so' >/dev/null; then
		echo "  FAILED      $(basename "$out"): still links libgc.so:" >&2
		ldd "$out" >&2
		return 1
	fi
	if ! nm "$out" | grep -E '^[0-9a-f]+ T GC_malloc$' >/dev/null; then
		echo "  FAILED      $(basename "$out"): GC_malloc is not a T symbol" >&2
		return 1
	fi
}

jobs_max=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs_max" -gt 4 ] && jobs_max=4
[ "$jobs_max" -lt 1 ] && jobs_max=1

pids=()
failed=0
# run_bg FUNC ARGS...: run in the background, at most $jobs_max at a time.
run_bg() {
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n || failed=1
	done
	"$@" &
	pids+=($!)
}

build_static() {
	local name=$1 src=$2
	mkdir -p "$STATIC_GC_DIR"
	[ -f "$STATIC_GC_DIR/libgc.a" ] || cp "$LIBGC_A" "$STATIC_GC_DIR/libgc.a"
	build_one "$OUTDIR/$name-static" "$src" \
		crystal build --no-color --link-flags "-L$STATIC_GC_DIR" \
		"$src" -o "$OUTDIR/$name-static" &&
		check_static "$OUTDIR/$name-static"
}

t_start=$SECONDS
echo "build-programs: building into $OUTDIR (jobs: $jobs_max)"
[ -f "$LIBGC_A" ] || die "libgc.a not found (install libgc-dev)"

# The static copy of libgc.a must be fresh if the system one changed.
if [ -f "$STATIC_GC_DIR/libgc.a" ] && ! cmp -s "$LIBGC_A" "$STATIC_GC_DIR/libgc.a"; then
	rm -f "$STATIC_GC_DIR/libgc.a"
fi

# Release builds first: they take the longest.
for src in "$SRCDIR"/*.cr; do
	name=$(basename "$src" .cr)
	[[ " $RELEASE_PROGRAMS " == *" $name "* ]] || continue
	run_bg build_one "$OUTDIR/$name-release" "$src" \
		crystal build --no-color --release "$src" -o "$OUTDIR/$name-release"
done
for src in "$SRCDIR"/*.cr; do
	name=$(basename "$src" .cr)
	is_mt "$name" && continue
	[[ " $RELEASE_ONLY " == *" $name "* ]] && continue
	run_bg build_one "$OUTDIR/$name" "$src" \
		crystal build --no-color "$src" -o "$OUTDIR/$name"
done
for name in $MT_PROGRAMS; do
	run_bg build_one "$OUTDIR/$name" "$SRCDIR/$name.cr" \
		crystal build --no-color -Dpreview_mt "$SRCDIR/$name.cr" -o "$OUTDIR/$name"
done
for name in $STATIC_PROGRAMS; do
	run_bg build_static "$name" "$SRCDIR/$name.cr"
done
run_bg build_one "$OUTDIR/callchain-c" "$SRCDIR/callchain.c" \
	"$CC" -O2 -g -fomit-frame-pointer -fno-inline -Wall -Werror \
	"$SRCDIR/callchain.c" -o "$OUTDIR/callchain-c" -lgc
# The HTTP server of bench/http_server.sh, attached with --pid in test_refill
# and test_http. Not --release as the bench builds it: the tests compare its
# profiles with its own counts and with full traces of the same build, and
# a release build of http/server takes a CPU 60 s more.
run_bg build_one "$OUTDIR/http_json" "$SRCDIR/../../bench/workloads/http_json.cr" \
	crystal build --no-color "$SRCDIR/../../bench/workloads/http_json.cr" \
	-o "$OUTDIR/http_json"
# The demo program (make demo builds it the same way): test_census names
# its types from its code.
run_bg build_one "$OUTDIR/demo" "$SRCDIR/../../demo/demo.cr" \
	crystal build --no-color "$SRCDIR/../../demo/demo.cr" -o "$OUTDIR/demo"
# A libgc without the slow paths --sample refill probes: it falls back.
run_bg build_one "$OUTDIR/stub_gc_user" "$SRCDIR/stub_gc_user.c" \
	sh -c '"$0" -O2 -g -shared -fPIC -Wall -Werror "$1/stub_gc.c" -o "$2/libgcstub.so" &&
	       "$0" -O2 -g -Wall -Werror "$1/stub_gc_user.c" -o "$2/stub_gc_user" \
		-L"$2" -lgcstub -Wl,-rpath,"$2"' "$CC" "$SRCDIR" "$OUTDIR"
run_bg build_one "$OUTDIR/jit_alloc" "$SRCDIR/jit_alloc.c" \
	"$CC" -O2 -g -Wall -Werror "$SRCDIR/jit_alloc.c" -o "$OUTDIR/jit_alloc" -lgc

for pid in "${pids[@]}"; do
	wait "$pid" || failed=1
done
[ "$failed" -eq 0 ] || die "some programs failed to build (see above)"
echo "build-programs: done in $((SECONDS - t_start)) s"
