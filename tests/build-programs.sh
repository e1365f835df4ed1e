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
# and, the toolchain matrix, for the GC_MATRIX_PROGRAMS, each linked with
# libgc.a built from Debian 12's libgc source (scripts/setup-debian.sh
# fetched it into ALYS_GC_SRC) in the ways users' libgc is built:
#   OUTDIR/NAME-clang     clang -O2, --enable-large-config, static: as the
#                         official Crystal tarballs build it
#   OUTDIR/NAME-gcclarge  the same with gcc
#   OUTDIR/NAME-odd       gcc -O0, no thread-local allocation: a build the
#                         tracer must not misread (it falls back, naming
#                         why); NAME-odd only for census
#   OUTDIR/NAME-d13       Debian 13's crystal (1.14, LLVM 19) and shared
#                         libgc (8.2.8), built inside the Debian 13 root
#                         that scripts/setup-debian.sh made (ALYS_D13_ROOT),
#                         run on this host through that root's own loader
#                         and libraries (linked with their host paths)
#   OUTDIR/NAME-d13static the same with Debian 13's libgc.a linked in
#   OUTDIR/NAME-d13mt     the same, shared libgc, -Dpreview_mt: heap_graph
#                         and http_json (bench/workloads) only
#   OUTDIR/NAME-mt        crystal build -Dpreview_mt: heap_graph, http_json
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
# (OUTDIR/.gc-static: built like the matrix's .gc-NAME, by build_matrix)
STATIC_GC_DIR=$OUTDIR/.gc-static
LIBGC_A=${LIBGC_A:-$(${CC} -print-file-name=libgc.a)}
[ -f "$LIBGC_A" ] || LIBGC_A=/usr/lib/x86_64-linux-gnu/libgc.a

STATIC_PROGRAMS="alloc_known sleeper liveness census sample_sites heap_graph gc_pauses memory_parts"
GC_MATRIX_PROGRAMS="alloc_known sleeper liveness census sample_sites heap_graph gc_pauses memory_parts"
# name:compiler:CFLAGS:configure options (the official tarballs' own, from
# crystal-lang/distribution-scripts: CFLAGS="-fPIC -pipe -O2" --disable-debug
# --disable-shared --enable-large-config)
GC_BUILDS=(
	"clang:clang:-fPIC -pipe -O2:--disable-debug --disable-shared --enable-large-config"
	"gcclarge:gcc:-fPIC -pipe -O2:--disable-debug --disable-shared --enable-large-config"
	"odd:gcc:-fPIC -pipe -O0:--disable-debug --disable-shared --disable-thread-local-alloc"
)
GC_SRC=${ALYS_GC_SRC:-/var/cache/alys-bpf/libgc-src}
D13_ROOT=${ALYS_D13_ROOT:-/var/cache/alys-bpf/trixie}
D13_LIB=$D13_ROOT/usr/lib/x86_64-linux-gnu
MT_PROGRAMS="faults"
RELEASE_PROGRAMS="callchain census deep_stacks gc_pauses http_names memory_parts sample_sites sleeper"
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

# build_gc NAME CC CFLAGS CONFIGURE-OPTIONS: OUTDIR/.gc-NAME/libgc.a from a
# copy of the libgc source (logs in OUTDIR/.logs/gc-NAME.log).
build_gc() {
	local name=$1 cc=$2 cflags=$3 opts=$4 dir=$OUTDIR/.gc-$1 src
	local stamp="$cc|$cflags|$opts|$(basename "$GC_SRC_DIR")"
	if [ -f "$dir/libgc.a" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
		echo "  up to date  libgc.a ($name)"
		return 0
	fi
	local t0=$SECONDS log=$OUTDIR/.logs/gc-$name.log
	rm -rf "$dir"
	mkdir -p "$dir"
	src=$dir/src
	cp -a "$GC_SRC_DIR" "$src"
	# shellcheck disable=SC2086
	if ! (cd "$src" && CC=$cc CFLAGS=$cflags ./configure $opts &&
		make -j"$jobs_max") >"$log" 2>&1; then
		echo "  FAILED      libgc.a ($name): $cc $cflags $opts" >&2
		tail -n 30 "$log" | sed 's/^/    | /' >&2
		return 1
	fi
	cp "$src/.libs/libgc.a" "$dir/libgc.a"
	rm -rf "$src"
	echo "$stamp" >"$dir/stamp"
	echo "  built       libgc.a ($name: $cc $cflags $opts) ($((SECONDS - t0)) s)"
}

# build_matrix NAME SRC GC: NAME-GC, linked with OUTDIR/.gc-GC/libgc.a. A
# Crystal cache per GC: the other builds of SRC run at the same time, and
# two compiles of one source in one cache crashed the compiler.
build_matrix() {
	local name=$1 src=$2 gc=$3
	build_one "$OUTDIR/$name-$gc" "$src" \
		env CRYSTAL_CACHE_DIR="$CRYSTAL_CACHE_DIR-$gc" \
		crystal build --no-color --link-flags "-L$OUTDIR/.gc-$gc" \
		"$src" -o "$OUTDIR/$name-$gc" &&
		check_static "$OUTDIR/$name-$gc"
}

# build_d13 NAME SRC SUFFIX: NAME-SUFFIX (d13: shared libgc; d13static:
# libgc.a; d13mt: shared libgc, -Dpreview_mt) by Debian 13's crystal in
# D13_ROOT (/proc mounted there by the caller), copied out; the loader and
# RUNPATH name D13_ROOT's own files. A Crystal cache per build: they run
# at the same time, and two compiles in one cache (of a source, or of a
# macro run several programs share) crashed the compiler.
# The source sits at its own path inside the root (copied by the caller),
# and the build runs in another directory: crystal writes the paths of
# files outside its working directory whole, so the program's DWARF names
# a file this host has.
build_d13() {
	local name=$1 src=$2 sfx=$3 dir=/alys-build/$1-$3 static= mt=
	[ "$sfx" = d13static ] && static=-L/alys-build/.static-gc
	[ "$sfx" = d13mt ] && mt=-Dpreview_mt
	# (before the build directory is emptied: there is nothing to copy)
	if up_to_date "$OUTDIR/$name-$sfx" "$src"; then
		echo "  up to date  $name-$sfx"
		return 0
	fi
	rm -rf "$D13_ROOT$dir"
	mkdir -p "$D13_ROOT$dir"
	build_one "$OUTDIR/$name-$sfx" "$src" \
		chroot "$D13_ROOT" env --chdir="$dir" HOME=/tmp CRYSTAL_CACHE_DIR=/alys-build/.cache-$name-$sfx \
		crystal build --no-color $mt "$src" -o "$dir/$name" --link-flags \
		"$static -Wl,--dynamic-linker=$D13_LIB/ld-linux-x86-64.so.2 -Wl,-rpath,$D13_LIB" &&
		cp "$D13_ROOT$dir/$name" "$OUTDIR/$name-$sfx" &&
		if [ "$sfx" = d13static ]; then check_static "$OUTDIR/$name-$sfx"; fi
}

t_start=$SECONDS
echo "build-programs: building into $OUTDIR (jobs: $jobs_max)"
[ -f "$LIBGC_A" ] || die "libgc.a not found (install libgc-dev)"
GC_SRC_DIR=$(compgen -G "$GC_SRC/libgc-*/configure" | head -n 1 || true)
[ -n "$GC_SRC_DIR" ] ||
	die "no libgc source in $GC_SRC (scripts/setup-debian.sh fetches it with apt-get source libgc)"
GC_SRC_DIR=$(dirname "$GC_SRC_DIR")

# The libgc builds first (the matrix programs link them), one at a time:
# each runs make -j.
for b in "${GC_BUILDS[@]}"; do
	IFS=: read -r gname gcc_ gflags gopts <<<"$b"
	build_gc "$gname" "$gcc_" "$gflags" "$gopts" || die "libgc ($gname) failed to build"
done

# The static copy of libgc.a must be fresh if the system one changed; made
# here, once, before the builds that link it run at once.
if [ -f "$STATIC_GC_DIR/libgc.a" ] && ! cmp -s "$LIBGC_A" "$STATIC_GC_DIR/libgc.a"; then
	rm -f "$STATIC_GC_DIR/libgc.a"
fi
mkdir -p "$STATIC_GC_DIR"
[ -f "$STATIC_GC_DIR/libgc.a" ] || cp "$LIBGC_A" "$STATIC_GC_DIR/libgc.a"

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
	run_bg build_matrix "$name" "$SRCDIR/$name.cr" static
done
for name in $GC_MATRIX_PROGRAMS; do
	for b in "${GC_BUILDS[@]}"; do
		gname=${b%%:*}
		[ "$gname" = odd ] && [ "$name" != census ] && continue
		run_bg build_matrix "$name" "$SRCDIR/$name.cr" "$gname"
	done
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
# The same server on the multi-threaded scheduler (CRYSTAL_WORKERS=4 runs
# its connections on four allocating threads): test_threads; and
# heap_graph's fibers on four threads: test_heap. Caches of their own: the
# plain builds compile the same sources at the same time.
run_bg build_one "$OUTDIR/http_json-mt" "$SRCDIR/../../bench/workloads/http_json.cr" \
	env CRYSTAL_CACHE_DIR="$OUTDIR/.crystal-cache-mt" \
	crystal build --no-color -Dpreview_mt "$SRCDIR/../../bench/workloads/http_json.cr" \
	-o "$OUTDIR/http_json-mt"
run_bg build_one "$OUTDIR/heap_graph-mt" "$SRCDIR/heap_graph.cr" \
	env CRYSTAL_CACHE_DIR="$OUTDIR/.crystal-cache-mt2" \
	crystal build --no-color -Dpreview_mt "$SRCDIR/heap_graph.cr" -o "$OUTDIR/heap_graph-mt"
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
pids=()

# Debian 13's toolchain, inside its root (its crystal needs /proc).
[ -x "$D13_ROOT/usr/bin/crystal" ] ||
	die "no Debian 13 root with crystal in $D13_ROOT (scripts/setup-debian.sh makes it)"
if ! mountpoint -q "$D13_ROOT/proc"; then
	mount -t proc proc "$D13_ROOT/proc" || die "cannot mount /proc in $D13_ROOT (root needed)"
	trap 'umount "$D13_ROOT/proc" 2>/dev/null' EXIT
fi
mkdir -p "$D13_ROOT/alys-build/.static-gc" "$D13_ROOT$SRCDIR"
cp "$D13_LIB/libgc.a" "$D13_ROOT/alys-build/.static-gc/libgc.a"
cp "$SRCDIR"/*.cr "$D13_ROOT$SRCDIR/"
# The programs name their loader and libraries by their host paths
# (D13_LIB): inside the root these paths lead back to it, for the macro
# runs crystal builds with the same flags and runs in there (ECR's).
if [ ! -e "$D13_ROOT$D13_ROOT" ]; then
	mkdir -p "$(dirname "$D13_ROOT$D13_ROOT")"
	ln -s / "$D13_ROOT$D13_ROOT"
fi
BENCH_SRC=$(cd "$SRCDIR/../../bench/workloads" && pwd)
mkdir -p "$D13_ROOT$BENCH_SRC"
cp "$BENCH_SRC/http_json.cr" "$D13_ROOT$BENCH_SRC/"
echo "  Debian 13: $(chroot "$D13_ROOT" crystal --version | head -n 1), libgc $(basename "$(readlink -f "$D13_LIB/libgc.so.1")")"
for name in $GC_MATRIX_PROGRAMS; do
	for sfx in d13 d13static; do
		run_bg build_d13 "$name" "$SRCDIR/$name.cr" "$sfx"
	done
done
# Crystal 1.14's threads: test_heap's fibers on four threads, test_threads'
# server
run_bg build_d13 heap_graph "$SRCDIR/heap_graph.cr" d13mt
run_bg build_d13 http_json "$BENCH_SRC/http_json.cr" d13mt
for pid in "${pids[@]}"; do
	wait "$pid" || failed=1
done
[ "$failed" -eq 0 ] || die "some programs failed to build (see above)"
echo "build-programs: done in $((SECONDS - t_start)) s"
