#!/usr/bin/env bash
# scripts/setup-debian.sh -- prepare a fresh Debian 12 (bookworm) machine to
# build alys-bpf, run its tests (make check), its demo (make demo) and its
# benchmarks. Run as root. Idempotent: running it again changes nothing.
#
#   1. apt-get update; apt-get install -y --no-install-recommends <packages>
#   2. mounts tracefs (/sys/kernel/tracing) and debugfs (/sys/kernel/debug)
#      when they are not mounted (some uprobe paths use them)
#   3. fetches Debian 12's libgc source package (apt-get source, from a
#      deb-src entry it adds) into ALYS_GC_SRC: the tests build it the ways
#      users' libgc is built (tests/build-programs.sh, the toolchain matrix)
#   4. makes a Debian 13 (trixie) root file system with its crystal (1.14)
#      and libgc (8.2.8) in ALYS_D13_ROOT with debootstrap, from the same
#      registry: the tests build programs inside it (the toolchain matrix)
#   5. reports whether the kernel offers BTF, BPF and uprobes
#
# Environment: ALYS_SETUP_NO_UPDATE=1 skips `apt-get update` (offline
# re-runs with an already fresh package index). ALYS_GC_SRC (default
# /var/cache/alys-bpf/libgc-src) and ALYS_APT_SOURCES (default
# /etc/apt/sources.list.d) say where the libgc source and the deb-src entry go;
# ALYS_D13_ROOT (default /var/cache/alys-bpf/trixie) the Debian 13 root.
set -euo pipefail

log() { printf 'setup-debian: %s\n' "$*"; }
die() { printf 'setup-debian: ERROR: %s\n' "$*" >&2; exit 1; }
# Any command that fails under set -e says what it was before the script ends.
trap 'rc=$?; printf "setup-debian: ERROR: line %s: \"%s\" failed with status %s\n" "$LINENO" "$BASH_COMMAND" "$rc" >&2; exit "$rc"' ERR

[ "$(id -u)" -eq 0 ] || die "run me as root (apt-get install, mount)"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script is for Debian 12"
if [ -r /etc/os-release ]; then
	. /etc/os-release
	if [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != 12 ]; then
		log "warning: written for Debian 12, this is ${PRETTY_NAME:-unknown}; trying anyway"
	fi
fi

PACKAGES=(
	# C toolchain, BPF compiler and loader, libraries of alys-bpf itself
	build-essential pkg-config clang llvm bpftool libbpf-dev
	libelf-dev libdw-dev zlib1g-dev libzstd-dev libmsgpack-dev libcapstone-dev
	# the --http endpoint's server; --push's client
	libmicrohttpd-dev libcurl4-openssl-dev
	binutils
	# Crystal and what `crystal build` links. Depends: libgc-dev,
	# libevent-dev, libpcre3-dev, pkg-config, gcc. Recommends (not pulled
	# by --no-install-recommends, but needed as soon as a program requires
	# http/openssl -> libssl-dev, zlib -> zlib1g-dev, yaml -> libyaml-dev,
	# xml -> libxml2-dev, big -> libgmp-dev):
	crystal libgc-dev libevent-dev libpcre3-dev
	libssl-dev libyaml-dev libxml2-dev libgmp-dev
	# tests, demo, benchmarks; libFuzzer's runtime for `make fuzz`
	# (time: /usr/bin/time, the peak memory of the converter's tests)
	python3 protobuf-compiler gdb linux-perf libxml2-utils procps time
	# the HTTP load generator of bench/http_server.sh
	wrk
	# profile.proto (/usr/share/gocode/src/github.com/google/pprof/proto),
	# for decoding the converter's pprof output with protoc in the tests;
	# google/pprof's own parser and CheckValid (tests/pprof_check, built
	# against it); go tool pprof, to open it as users do
	golang-github-google-pprof-dev golang-go
	# the flamegraph and timeline SVGs opened in a real browser, driven as
	# a user would (click, search): tests/e2e/svg_in_browser.py
	chromium chromium-driver python3-selenium
	libclang-rt-14-dev
	# apt-get source (dpkg-source): libgc's source package, built by the
	# tests as the official Crystal tarballs build it (clang, large config)
	dpkg-dev
	# the Debian 13 root file system of the toolchain matrix
	debootstrap
	# go tool pprof -http's graph page, and the HTTP client that fetches it
	graphviz curl
)

# Browser tools the tests open users' files in, from the npm registry at
# pinned versions (tests/e2e/speedscope_in_browser.py, the mermaid graph):
# into WEB_TOOLS/node_modules, with the machine's npm (Debian's npm package
# when there is none).
WEB_TOOLS=${ALYS_WEB_TOOLS:-/opt/alys-bpf-web}
NPM_PACKAGES=(speedscope@1.25.0 mermaid@11.12.0)

export DEBIAN_FRONTEND=noninteractive

# Debian 12's source packages, for `apt-get source libgc`: an entry of our
# own unless one is configured, written before the update reads the lists.
GC_SRC=${ALYS_GC_SRC:-/var/cache/alys-bpf/libgc-src}
APT_SOURCES=${ALYS_APT_SOURCES:-/etc/apt/sources.list.d}
if ! grep -qsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list "$APT_SOURCES"/*.list \
	"$APT_SOURCES"/*.sources; then
	log "adding Debian 12's source packages (deb-src) as $APT_SOURCES/alys-bpf-src.sources"
	mkdir -p "$APT_SOURCES"
	cat >"$APT_SOURCES/alys-bpf-src.sources" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

if [ "${ALYS_SETUP_NO_UPDATE:-0}" = 1 ]; then
	log "skipping apt-get update (ALYS_SETUP_NO_UPDATE=1)"
else
	log "apt-get update"
	apt-get update -q </dev/null
fi

# Every package must exist in the configured repositories (one apt-cache
# call for all: it is slow to start).
missing=()
have=$(apt-cache policy "${PACKAGES[@]}" 2>/dev/null |
	awk '/^[^ ]/ { sub(":$", "", $1); p = $1 } /^  Candidate:/ && $2 != "(none)" { print p }')
for p in "${PACKAGES[@]}"; do
	grep -qxF "$p" <<<"$have" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] ||
	die "no installation candidate for: ${missing[*]} (is the bookworm main repository configured?)"

# dpkg-query exits 1 when any named package is unknown to dpkg (on a fresh
# machine, most of them): that is an answer, not a failure.
to_install=()
installed=$({ dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true; } |
	awk '$NF == "installed" { print $1 }')
for p in "${PACKAGES[@]}"; do
	grep -qxF "$p" <<<"$installed" || to_install+=("$p")
done
log "apt-get install -y --no-install-recommends ${#PACKAGES[@]} packages (${#to_install[@]} not yet installed${to_install:+: ${to_install[*]}})"
apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" </dev/null

if ! command -v npm >/dev/null 2>&1; then
	log "npm not found: apt-get install npm"
	apt-get install -y -q --no-install-recommends npm </dev/null
fi
have_web=1
for p in "${NPM_PACKAGES[@]}"; do
	f=$WEB_TOOLS/node_modules/${p%@*}/package.json
	v=$([ -r "$f" ] && sed -n 's/^ *"version": *"\(.*\)",*$/\1/p' "$f" | head -n 1 || true)
	[ "$v" = "${p##*@}" ] || have_web=0
done
if [ $have_web = 1 ]; then
	log "npm packages already in $WEB_TOOLS: ${NPM_PACKAGES[*]}"
else
	log "npm install into $WEB_TOOLS: ${NPM_PACKAGES[*]}"
	mkdir -p "$WEB_TOOLS"
	npm install --prefix "$WEB_TOOLS" --no-save --no-audit --no-fund --loglevel=error \
		"${NPM_PACKAGES[@]}" </dev/null
fi

# libgc's source, unpacked (with Debian's patches) under GC_SRC/libgc-*/.
if compgen -G "$GC_SRC/libgc-*/configure" >/dev/null; then
	log "libgc source already in $GC_SRC"
else
	log "apt-get source libgc into $GC_SRC"
	mkdir -p "$GC_SRC"
	(cd "$GC_SRC" && apt-get source -q libgc </dev/null)
	compgen -G "$GC_SRC/libgc-*/configure" >/dev/null ||
		die "apt-get source libgc left no $GC_SRC/libgc-*/configure"
fi

# Debian 13's crystal and libgc, in a root file system of their own (~750 MB,
# ~35 s): made in a temporary folder and renamed when complete, so that a
# run cut short leaves none half made; made again when the package list
# changed (it is kept in .alys-complete). zlib and OpenSSL: HTTP::Server.
D13_ROOT=${ALYS_D13_ROOT:-/var/cache/alys-bpf/trixie}
D13_PACKAGES=crystal,libgc-dev,libevent-dev,libpcre2-dev,pkg-config,gcc,libc6-dev,zlib1g-dev,libssl-dev
if [ -x "$D13_ROOT/usr/bin/crystal" ] &&
	[ "$(cat "$D13_ROOT/.alys-complete" 2>/dev/null)" = "$D13_PACKAGES" ]; then
	log "Debian 13 root already in $D13_ROOT"
else
	log "debootstrap trixie into $D13_ROOT (packages: $D13_PACKAGES)"
	rm -rf "$D13_ROOT.tmp"
	mkdir -p "$(dirname "$D13_ROOT")"
	debootstrap --variant=minbase --include="$D13_PACKAGES" trixie "$D13_ROOT.tmp" \
		http://deb.debian.org/debian </dev/null
	echo "$D13_PACKAGES" >"$D13_ROOT.tmp/.alys-complete"
	# a build may have left /proc mounted in the old root
	if [ -d "$D13_ROOT/proc" ] && mountpoint -q "$D13_ROOT/proc"; then umount "$D13_ROOT/proc"; fi
	rm -rf "$D13_ROOT"
	mv "$D13_ROOT.tmp" "$D13_ROOT"
fi

# tracefs and debugfs
mount_if_needed() {
	local type=$1 dir=$2
	if mountpoint -q "$dir" 2>/dev/null ||
		awk -v d="$dir" -v t="$type" '$2 == d && $3 == t { f = 1 } END { exit !f }' /proc/mounts; then
		log "$type already mounted on $dir"
	elif [ -d "$dir" ] && mount -t "$type" "$type" "$dir" 2>/dev/null; then
		log "mounted $type on $dir"
	else
		log "warning: could not mount $type on $dir"
	fi
}
mount_if_needed debugfs /sys/kernel/debug
mount_if_needed tracefs /sys/kernel/tracing

# Report what the kernel offers (informational; the e2e tests fail loudly
# when something is missing).
log "kernel $(uname -r)"
if [ -r /sys/kernel/btf/vmlinux ]; then
	log "BTF: /sys/kernel/btf/vmlinux present"
else
	log "warning: /sys/kernel/btf/vmlinux missing: building the BPF program needs BTF"
fi
if [ -e /sys/bus/event_source/devices/uprobe/type ]; then
	log "uprobes: available"
else
	log "warning: no uprobe PMU: alys-bpf cannot attach"
fi
if bpftool prog list >/dev/null 2>&1; then
	log "bpf(2): works"
else
	log "warning: 'bpftool prog list' failed: bpf(2) unavailable or forbidden"
fi
log "done: $(crystal --version 2>/dev/null | head -n 1), $(clang --version | head -n 1)"
