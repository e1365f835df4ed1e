#!/usr/bin/env bash
# bench/bpf_profile.sh: where a traced allocation's time goes, by source
# line of the BPF programs (issue 38). Traces Debian's compiler as
# bench/compiler.sh does, records `perf record -a -g` for SECONDS in the
# middle of the run, and puts each of the compiler's samples on the
# allocation program's source line it ran (a helper's time on the line
# that called it, marked [helper]), or on the trap around it, or on the
# compiler's own code. perf cannot annotate BPF on Debian (no libopcodes):
# the lines come from the program's line info (bench/bpf_lines.c).
# Prints ns a program run for each (~an event: 94% of the compiler's
# finish at entry): samples times perf's period (1 ms) over the program's
# runs while perf ran (kernel.bpf_stats_enabled on meanwhile).
#   bench/bpf_profile.sh [SECONDS] [ALYS-OPTIONS...]   (root, after make;
#   default 6, e.g. --no-liveness; ALYS_BIN=DIR for another build)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-6}
shift || true
ALYS=${ALYS_BIN:-$ROOT/bin}/alys-bpf CONV=$ROOT/bin/alys_converter
command -v crystal >/dev/null || { echo "crystal: not installed (scripts/setup-debian.sh)" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf: not installed (scripts/setup-debian.sh)" >&2; exit 1; }
W=$(mktemp -d /tmp/alys-prof.XXXXXX)
trap 'sysctl -qw kernel.bpf_stats_enabled=0; rm -rf "$W"' EXIT
cc -O2 -o "$W/bpf_lines" "$ROOT/bench/bpf_lines.c" -lbpf
cp "$ROOT/bench/workloads/compiler_input.cr" "$W/prog.cr"
export CRYSTAL_CACHE_DIR=$W/cache
CMD=(crystal build --no-codegen --no-color "$W/prog.cr" -o "$W/prog")
"${CMD[@]}" >/dev/null	# warm the cache

"$ALYS" -q "$@" -o "$W/t.alys" -- "${CMD[@]}" >/dev/null &
pid=$!
sleep "${SETTLE:-2}"	# past the start-up (~1 s now)
id=$(bpftool prog show | sed -n 's/^\([0-9]*\): .* name gc_alloc_sess.*/\1/p' | head -1)
[ -n "$id" ] || { echo "no gc_alloc_session program loaded (a per-call trace?)" >&2; exit 1; }
"$W/bpf_lines" "$id" >"$W/lines"
# the program's runs while perf records (kernel.bpf_stats_enabled): one an
# event finished at entry, two for one with its return
# (0 once the program is gone: bpftool prints its error as JSON)
runs() { bpftool prog show id "$id" -j 2>/dev/null |
	python3 -c 'import json,sys; print(json.loads(sys.stdin.read() or "{}").get("run_cnt", 0))'; }
sysctl -qw kernel.bpf_stats_enabled=1
r0=$(runs)
perf record -q --no-buildid --no-buildid-cache -F 1000 -a -g -o "$W/perf.data" -- sleep "$SECS" 2>/dev/null
r1=$(runs)
[ "$r1" -gt "$r0" ] || { echo "the traced run ended before perf did: try fewer SECONDS" >&2; exit 1; }
sysctl -qw kernel.bpf_stats_enabled=0
perf script -i "$W/perf.data" -F comm,ip,sym 2>/dev/null >"$W/chains"
wait "$pid"
python3 - "$W" "$((r1 - r0))" <<'PY'
import bisect, collections, sys
w, runs = sys.argv[1], max(int(sys.argv[2]), 1)
lines = []
for l in open(w + '/lines'):
    a, n, s = (l.rstrip('\n').split(' ', 2) + [''])[:3]
    lines.append((int(a, 16), int(n), s.strip()))
lines.sort()
addrs = [x[0] for x in lines]
samples, cur = [], None
for l in open(w + '/chains'):
    if not l.strip():
        if cur: samples.append(cur)
        cur = None
    elif not l[0].isspace():
        cur = [l.split()[0]]
    elif cur is not None:
        p = l.split()
        cur.append((int(p[0], 16), p[1] if len(p) > 1 else '?'))
if cur: samples.append(cur)
mine = [s[1:] for s in samples if s[0] == 'crystal']
# a sample is 1 ms of a CPU (-F 1000); per program run
ns = lambda n: n * 1e6 / runs
where, line = collections.Counter(), collections.Counter()
for ch in mine:
    prog = next(((ip, s) for ip, s in ch if s.startswith('bpf_prog_')), None)
    if prog is None:
        where['trap' if any('int3' in s or 'uprobe' in s for _, s in ch) else 'the compiler, and other kernel work'] += 1
        continue
    where['BPF programs'] += 1
    i = bisect.bisect_right(addrs, prog[0]) - 1
    n, s = (lines[i][1], lines[i][2][:80]) if i >= 0 else (0, '?')
    line[(n, s + ('' if ch[0][1].startswith('bpf_prog_') else ' [helper]'))] += 1
print(f'# bench/bpf_profile.sh: {len(mine)} samples of the compiler, {runs} program runs (ns a run)')
for k, c in where.most_common():
    print(f'{ns(c):7.0f} ns  {k}')
print('# the BPF programs by source line (line 0: code without line info)')
for (n, s), c in line.most_common(40):
    print(f'{ns(c):7.0f} ns  {n:5} {s}')
PY
