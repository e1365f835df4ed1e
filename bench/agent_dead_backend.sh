#!/usr/bin/env bash
# bench/agent_dead_backend.sh: alys-bpf --all --push with nothing listening
# at the URL for SECS seconds (issue 22: "memory stays bounded over an hour
# of a dead backend"). Two Crystal programs allocate all along; windows are
# made every second (--push-every 1: an hour of the default 15-s windows is
# 240 per process; 600 s here makes 600), the queue holds --push-queue 64.
# Prints the agent's RSS every 30 s with the profiles made, failed attempts,
# dropped and queued (from /metrics), and the events lost.
#   bench/agent_dead_backend.sh [SECS]   (as root, after make; 600)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-600}
P=$ROOT/tests/build/programs
W=$(mktemp -d /tmp/alys-dead.XXXXXX)
[ -x "$P/sleeper" ] || { echo "needs tests/build/programs (tests/build-programs.sh)" >&2; exit 1; }
"$P/sleeper" 0 /dev/null 2000 >/dev/null &
A=$!
"$P/sleeper-static" 0 /dev/null 1000 >/dev/null &
B=$!
# a port nothing listens on: connections refused at once
DEAD=$((20000 + RANDOM % 20000))
"$ROOT/bin/alys-bpf" --all --only-comm sleeper --only-comm sleeper-static \
	--push "http://127.0.0.1:$DEAD" --push-every 1 --http 0 2>"$W/err" &
AG=$!
trap 'kill $A $B 2>/dev/null; kill -INT $AG 2>/dev/null; sleep 1; rm -rf "$W"' EXIT
until grep -q "tracing pid $B " "$W/err" 2>/dev/null; do sleep 0.1; done
url=$(sed -n 's|^alys-bpf: serving the agent.s metrics at \(http://[0-9.:]*/metrics\)$|\1|p' "$W/err")
m() { curl -s "$url" | awk -v k="$1" '$1 == k { print $2 }'; }
lost() { curl -s "$url" | awk '/^alys_lost_events_total\{/ { s += $2 } END { print s + 0 }'; }
echo "# bench/agent_dead_backend.sh, $(date -u +%F), $(uname -r), ${SECS} s, windows of 1 s, queue 64"
printf '%6s %9s %8s %8s %8s %7s %6s\n' secs rss_KiB made failed dropped queued lost
for ((t = 0; t <= SECS; t += 30)); do
	printf '%6d %9d %8s %8s %8s %7s %6s\n' $t "$(awk '/^VmRSS/ { print $2 }' /proc/$AG/status)" \
		"$(m alys_push_profiles_total)" "$(m alys_push_failed_attempts_total)" \
		"$(m alys_push_dropped_total)" "$(m alys_push_queued)" "$(lost)"
	[ $t -lt "$SECS" ] && sleep 30
done
