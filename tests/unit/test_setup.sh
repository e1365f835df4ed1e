#!/usr/bin/env bash
# scripts/setup-debian.sh on a machine that has none of its packages, with
# stub apt-get, apt-cache and dpkg-query on PATH that behave like Debian's on
# a fresh machine: dpkg-query exits 1 for packages it does not know, apt-get
# install makes them known. Also: each failure names what failed.
#
# ALYS_SETUP_SCRIPT=PATH tests another copy of the script (e.g. an old one,
# to see this test fail on it).
# It tests the setup script, not a build: it runs once.
# run-all-builds: bin
. "$(dirname "$0")/../lib.sh"

SCRIPT=${ALYS_SETUP_SCRIPT:-$ALYS_ROOT/scripts/setup-debian.sh}
make_tmpdir T
STUBS=$T/bin
mkdir -p "$STUBS"

# stub NAME BODY: a bash script NAME on the stub PATH.
stub() {
	printf '#!/usr/bin/env bash\n%s\n' "$2" >"$STUBS/$1"
	chmod +x "$STUBS/$1"
}

# The machine's state: one installed package per line in $STATE/installed.
# ALYS_STUB_NO_CANDIDATE names a package apt-cache has no candidate for;
# ALYS_STUB_FAIL names an apt-get verb that fails like a broken mirror.
stub apt-get '
echo "apt-get $*" >>"$STATE/log"
verb=
for a in "$@"; do case $a in -*) ;; *) [ -n "$verb" ] || { verb=$a; continue; }; pkgs+=("$a") ;; esac; done
if [ "$verb" = "${ALYS_STUB_FAIL:-}" ]; then
	echo "E: Failed to fetch http://deb.debian.org/... 404 Not Found" >&2
	exit 100
fi
[ "$verb" = install ] && printf "%s\n" "${pkgs[@]}" >>"$STATE/installed"
# source PKG: unpacked into the current directory, if dpkg-dev is installed
if [ "$verb" = source ]; then
	grep -qx dpkg-dev "$STATE/installed" || { echo "sh: 1: dpkg-source: not found" >&2; exit 100; }
	mkdir -p "${pkgs[0]}-8.2.2" && touch "${pkgs[0]}-8.2.2/configure"
fi
exit 0'
stub apt-cache '
[ "$1" = policy ] || exit 1
shift
for p in "$@"; do
	echo "$p:"
	echo "  Installed: (none)"
	if [ "$p" = "${ALYS_STUB_NO_CANDIDATE:-}" ]; then echo "  Candidate: (none)"; else echo "  Candidate: 1.0-1"; fi
done'
# dpkg-query -W -f=FORMAT PKG...: known packages printed, then exit 1 if any
# package was unknown (what Debian 12 does).
stub dpkg-query '
rc=0
for p in "$@"; do
	case $p in -*) continue ;; esac
	if grep -qxF "$p" "$STATE/installed" 2>/dev/null; then
		echo "$p install ok installed"
	else
		echo "dpkg-query: no packages found matching $p" >&2
		rc=1
	fi
done
exit $rc'
stub id '[ "$1" = -u ] && { echo 0; exit 0; }; exec /usr/bin/id "$@"'
for c in mount mountpoint bpftool; do stub "$c" 'exit 0'; done
# debootstrap ... SUITE TARGET MIRROR: a root with crystal in it, if the
# package is installed
stub debootstrap '
echo "debootstrap $*" >>"$STATE/log"
grep -qx debootstrap "$STATE/installed" || { echo "debootstrap: command not found" >&2; exit 127; }
t=${@: -2:1}
mkdir -p "$t/usr/bin" && printf "#!/bin/sh\n" >"$t/usr/bin/crystal" && chmod +x "$t/usr/bin/crystal"'
stub crystal 'echo "Crystal 1.6.0 (stub)"'
stub clang 'echo "clang version 14 (stub)"'
# npm install --prefix DIR PKG@VERSION...: what the registry would unpack
stub npm '
echo "npm $*" >>"$STATE/log"
[ "$1" = install ] || exit 1
shift
while [ $# -gt 0 ]; do
	case $1 in
	--prefix) dir=$2; shift ;;
	-*) ;;
	*@*) mkdir -p "$dir/node_modules/${1%@*}" &&
		printf "{\n  \"name\": \"%s\",\n  \"version\": \"%s\",\n}\n" "${1%@*}" "${1##*@}" \
			>"$dir/node_modules/${1%@*}/package.json" ;;
	esac
	shift
done'

# run_setup NAME [VAR=VALUE...]: run the script against a fresh state;
# sets $out (stdout+stderr) and $rc.
run_setup() {
	local name=$1
	shift
	STATE=$T/state-$name
	mkdir -p "$STATE"
	: >"$STATE/installed"
	out=$(env "$@" STATE="$STATE" ALYS_WEB_TOOLS="$STATE/web" ALYS_GC_SRC="$STATE/gc-src" \
		ALYS_APT_SOURCES="$STATE/apt" ALYS_D13_ROOT="$STATE/trixie" PATH="$STUBS:$PATH" \
		bash "$SCRIPT" </dev/null 2>&1)
	rc=$?
}

# A fresh machine: installs everything, says how many were missing.
run_setup fresh
check_eq "fresh machine: setup exits 0" "$rc" 0
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/    /'
npkg=$(grep -c . "$STATE/installed")
check_ge "fresh machine: packages installed" "$npkg" 20
check_match "fresh machine: says none was installed" "$out" "\($npkg not yet installed"
check "fresh machine: apt-get update ran" grep -qx 'apt-get update -q' "$STATE/log"
check_match "fresh machine: ends with done" "$(printf '%s\n' "$out" | tail -n 1)" '^setup-debian: done'

# Every library the Makefile links (and the fuzz harness) comes from a
# package the script installs: a library added to the build without its
# package would pass on machines that kept it from earlier sessions.
declare -A lib_pkg=([bpf]=libbpf-dev [elf]=libelf-dev [dw]=libdw-dev [z]=zlib1g-dev
	[zstd]=libzstd-dev [msgpackc]=libmsgpack-dev [capstone]=libcapstone-dev [m]=libc6-dev
	[pthread]=libc6-dev [microhttpd]=libmicrohttpd-dev [curl]=libcurl4-openssl-dev)
missing=()
for l in $(cat "$ALYS_ROOT/Makefile" "$ALYS_ROOT/tests/fuzz/run.sh" | grep -v '^[[:space:]]*#' |
	grep -oE -- '(^|[[:space:]])-l[a-z0-9_]+' | tr -d ' \t' | sort -u); do
	p=${lib_pkg[${l#-l}]:-}
	if [ -z "$p" ]; then
		missing+=("$l (no package known to this test: add it here and to the script)")
	elif [ "$p" != libc6-dev ] && ! grep -qx "$p" "$STATE/installed"; then
		missing+=("$l ($p not installed)")
	fi
done
check_eq "fresh machine: every library linked has its package installed" "${missing[*]:-}" ""
# Tools the tests run by path, not found on a fresh machine without them.
for tool_pkg in /usr/bin/time:time /usr/bin/protoc:protobuf-compiler /usr/bin/xmllint:libxml2-utils \
	/usr/bin/dot:graphviz /usr/bin/chromium:chromium /usr/bin/curl:curl /usr/bin/wrk:wrk \
	/usr/bin/go:golang-go \
	/usr/share/gocode/src/github.com/google/pprof/profile:golang-github-google-pprof-dev; do
	check "fresh machine: ${tool_pkg%%:*} (package ${tool_pkg#*:}) installed" \
		grep -qx "${tool_pkg#*:}" "$STATE/installed"
done

# libgc's source package for the toolchain matrix (tests/build-programs.sh)
check_match "fresh machine: a deb-src entry for Debian 12 (apt-get source needs it)" \
	"$(cat "$STATE/apt/alys-bpf-src.sources" 2>/dev/null)" 'Types: deb-src'
check "fresh machine: apt-get source libgc ran" grep -q '^apt-get source .*libgc$' "$STATE/log"
check "fresh machine: libgc's source unpacked" test -f "$STATE/gc-src/libgc-8.2.2/configure"
check "fresh machine: deb-src written before apt-get update" \
	test "$(grep -n 'apt-get update' "$STATE/log" | head -n 1 | cut -d: -f1)" -lt \
	"$(grep -n 'apt-get source' "$STATE/log" | head -n 1 | cut -d: -f1)"
# The Debian 13 root of the toolchain matrix, with its crystal
check_match "fresh machine: debootstrap trixie with crystal and libgc-dev" \
	"$(grep '^debootstrap' "$STATE/log")" "--include=crystal,libgc-dev,.* trixie $STATE/trixie.tmp "
check_match "fresh machine: ... and what HTTP::Server links (zlib, OpenSSL)" \
	"$(grep '^debootstrap' "$STATE/log")" "--include=[^ ]*,zlib1g-dev,libssl-dev "
check "fresh machine: the Debian 13 root is complete" test -x "$STATE/trixie/usr/bin/crystal" -a \
	-f "$STATE/trixie/.alys-complete"

# The browser tools the tests open files in, from npm at pinned versions.
for p in speedscope@1.25.0 mermaid@11.12.0; do
	check "fresh machine: npm installs $p into ALYS_WEB_TOOLS" \
		grep -q "^npm install --prefix $STATE/web .*$p" "$STATE/log"
	check_match "fresh machine: $p is there" \
		"$(cat "$STATE/web/node_modules/${p%@*}/package.json" 2>/dev/null)" "\"version\": \"${p#*@}\""
done

# Run again on the same machine: nothing missing any more.
out=$(env STATE="$STATE" ALYS_WEB_TOOLS="$STATE/web" ALYS_GC_SRC="$STATE/gc-src" \
	ALYS_APT_SOURCES="$STATE/apt" ALYS_D13_ROOT="$STATE/trixie" PATH="$STUBS:$PATH" \
	bash "$SCRIPT" </dev/null 2>&1)
check_eq "second run: exits 0" "$?" 0
check_match "second run: nothing left to install" "$out" '\(0 not yet installed\)'
check_match "second run: npm packages already there" "$out" 'npm packages already in'
check_eq "second run: npm not run again" "$(grep -c '^npm install' "$STATE/log")" 1
check_eq "second run: libgc's source not fetched again" "$(grep -c '^apt-get source' "$STATE/log")" 1
check_eq "second run: the Debian 13 root not made again" "$(grep -c '^debootstrap' "$STATE/log")" 1
# A root made by an older script (another package list) is made again.
echo "crystal,libgc-dev" >"$STATE/trixie/.alys-complete"
env STATE="$STATE" ALYS_WEB_TOOLS="$STATE/web" ALYS_GC_SRC="$STATE/gc-src" \
	ALYS_APT_SOURCES="$STATE/apt" ALYS_D13_ROOT="$STATE/trixie" PATH="$STUBS:$PATH" \
	bash "$SCRIPT" </dev/null >/dev/null 2>&1
check_eq "a Debian 13 root with an older package list: made again" \
	"$(grep -c '^debootstrap' "$STATE/log")" 2
check_match "... and marked with the new list" "$(cat "$STATE/trixie/.alys-complete")" 'zlib1g-dev,libssl-dev$'

# Failures name what failed.
run_setup nocand ALYS_STUB_NO_CANDIDATE=libcapstone-dev
check_eq "no candidate: exit 1" "$rc" 1
check_match "no candidate: names the package" "$out" 'ERROR: no installation candidate for: libcapstone-dev'

run_setup installfail ALYS_STUB_FAIL=install
check_eq "apt-get install fails: its status" "$rc" 100
check_match "apt-get install fails: says which command" "$out" 'ERROR: line [0-9]+: "apt-get install .*" failed with status 100'

run_setup updatefail ALYS_STUB_FAIL=update
check_eq "apt-get update fails: its status" "$rc" 100
check_match "apt-get update fails: says which command" "$out" 'ERROR: line [0-9]+: "apt-get update -q[^"]*" failed with status 100'

summary
