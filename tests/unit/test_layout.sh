#!/usr/bin/env bash
# The source tree against what docs/DESIGN.md says of it (issue 39):
#   - Pieces: every source file is named in DESIGN's "Pieces" section by its
#     path, or by a backquoted glob (`converter/out_*.c`); a header counts
#     as named with its .c (X.h is X.c's public header); and every path or
#     glob named there matches a file.
#   - Includes name their layer: "core/session.h" (src/'s own, from src/),
#     "lib/u64_table.h" (the others, from the top); only include/'s format
#     headers (and bpf/'s own, in bpf/) go by their bare names.
#   - Layers: no file includes a header of a layer above its own. Bottom
#     up: include/; lib/; profile/; src/base/; src/unwind/, src/gc/ and
#     converter/; src/core/;
#     src/modes/; src/agent/; src/main.c. bpf/ includes only include/.
# run-all-builds: bin
#   tests/unit/test_layout.sh BINDIR   (BINDIR unused: no binary runs)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"

# check ROOT: one line per finding, "pieces: ...", "layers: ...", "ok: N"
check_tree() {
	"$ALYS_PYTHON" - "$1" <<'PY'
import fnmatch, os, re, sys
root = sys.argv[1]
DIRS = ['bpf', 'include', 'lib', 'profile', 'converter', 'src']
ORDER = {'include': 0, 'lib': 1, 'profile': 2, 'src/base': 3, 'src/unwind': 4, 'src/gc': 4,
         'converter': 4, 'src/core': 5, 'src/modes': 6, 'src/agent': 7, 'src': 8}
files = []
for d in DIRS:
    for dirpath, _, names in os.walk(os.path.join(root, d)):
        for n in names:
            p = os.path.relpath(os.path.join(dirpath, n), root)
            if n.endswith(('.c', '.h')) and not n.endswith('.skel.h') and n != 'vmlinux.h':
                files.append(p)
files.sort()
out = []

# --- Pieces ---
design = open(os.path.join(root, 'docs/DESIGN.md')).read()
m = re.search(r'^## Pieces\n(.*?)^## ', design, re.S | re.M)
section = m.group(1) if m else ''
if not m:
    out.append('pieces: docs/DESIGN.md has no "## Pieces" section')
# paths only: a bare "u64_table.c" in a job's text refers to its row's file
named = set(re.findall(r'`([A-Za-z0-9_.*]+/[A-Za-z0-9_./*]+\.[ch])`', section))
for pat in sorted(named):
    if not any(fnmatch.fnmatchcase(f, pat) for f in files):
        out.append('pieces: DESIGN names %s, which is no file of the tree' % pat)
def is_named(f):
    if any(fnmatch.fnmatchcase(f, pat) for pat in named):
        return True
    return f.endswith('.h') and f[:-2] + '.c' in files and is_named(f[:-2] + '.c')
for f in files:
    if not is_named(f):
        out.append('pieces: %s is not named in DESIGN\'s Pieces' % f)

# --- Layers ---
by_name = {}
file_set = set(files)
for f in files:
    by_name.setdefault(os.path.basename(f), []).append(f)
def layer_of(f):
    d = os.path.dirname(f)
    return d, ORDER.get(d)
for f in files:
    d, lf = layer_of(f)
    if d != 'bpf' and lf is None:
        out.append('layers: %s is in %s, no layer of this check (add it to ORDER)' % (f, d))
        continue
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(os.path.join(root, f)).read(), re.M):
        if '/' in inc:
            # names its layer: src/'s own from src/ ("core/session.h"),
            # the others from the top ("lib/u64_table.h")
            h = next((c for c in ('src/' + inc, inc) if c in file_set), None)
            if h is None:
                out.append('layers: %s includes "%s", which is no header of the tree' % (f, inc))
                continue
        else:
            cands = by_name.get(inc, [])
            if len(cands) != 1:
                continue	# a system or generated header
            h = cands[0]
            hd = os.path.dirname(h)
            if hd != 'include' and not (d == 'bpf' and hd == 'bpf'):
                out.append('layers: %s includes %s by its bare name: name its layer ("%s")'
                           % (f, h, h[4:] if h.startswith('src/') else h))
                continue
        hd, lh = layer_of(h)
        if hd == d:
            continue
        if d == 'bpf':
            bad = hd != 'include'
        else:
            bad = lh is None or lh > lf or (lh == lf)
        if bad:
            out.append('layers: %s includes %s, a layer above or beside its own' % (f, h))
print('\n'.join(out))
print('ok: %d files' % len(files))
PY
}

out=$(check_tree "$ALYS_ROOT")
check_match "the tree: $(echo "$out" | tail -n 1)" "$(echo "$out" | tail -n 1)" '^ok: [0-9]+ files$'
check_eq "every source file named in DESIGN's Pieces, every name a file" \
	"$(echo "$out" | grep '^pieces:')" ""
check_eq "no include of a header from a layer above" \
	"$(echo "$out" | grep '^layers:')" ""

# The checks fail when they should: a copy of the tree with an unlisted
# file, a back-up include, a name of a file that is gone.
make_tmpdir C
cp -r "$ALYS_ROOT/bpf" "$ALYS_ROOT/include" "$ALYS_ROOT/lib" "$ALYS_ROOT/profile" \
	"$ALYS_ROOT/converter" "$ALYS_ROOT/src" "$C/"
mkdir -p "$C/docs" && cp "$ALYS_ROOT/docs/DESIGN.md" "$C/docs/"
rm -rf "$C/src/bpf" 2>/dev/null
printf '/* new */\n' >"$C/lib/unlisted.c"
printf '#include "core/session.h"\n' >>"$C/lib/u64_table.c"
printf '#include "u64_table.h"\n' >>"$C/lib/str_table.c"
printf '#include "core/gone.h"\n' >>"$C/src/core/launch.c"
sed -i 's|`lib/str_table.c`|`lib/str_table.c`, `lib/gone.c`|' "$C/docs/DESIGN.md"
out=$(check_tree "$C")
check_match "an unlisted file is found" "$out" 'pieces: lib/unlisted.c is not named'
check_match "a name of no file is found" "$out" 'pieces: DESIGN names lib/gone.c, which is no file'
check_match "an include from a layer above is found" "$out" \
	'layers: lib/u64_table.c includes src/core/session.h'
check_match "an include by a bare name is found" "$out" \
	'layers: lib/str_table.c includes lib/u64_table.h by its bare name: name its layer \("lib/u64_table.h"\)'
check_match "an include of no header is found" "$out" \
	'layers: src/core/launch.c includes "core/gone.h", which is no header of the tree'
summary
