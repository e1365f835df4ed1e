#!/usr/bin/env python3
"""The frames of a flamegraph SVG (alys_converter -f flamegraph) with the
most self value, as a viewer reads them off the picture: a frame's value
(from its tooltip) less the values of the frames drawn on it.

Usage: flame_self.py FILE.svg N
Prints N lines "VALUE<TAB>NAME", most self value first, the same name's
frames summed. Frames too narrow to draw are in no one's sum: their value
stays in their parent's self.
"""
import collections
import html
import re
import sys

FRAME = re.compile(r'<g data-x="([0-9.]+)" data-w="([0-9.]+)" data-depth="([0-9]+)">'
                   r'<title>(.*?) \(([0-9]+) [a-z]+, [0-9.]+%\)</title>')


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    frames = [(float(x), float(w), int(d), html.unescape(name), int(v))
              for x, w, d, name, v in FRAME.findall(open(path, encoding="utf-8").read())]
    by_depth = collections.defaultdict(list)
    for f in frames:
        by_depth[f[2]].append(f)
    own = {id(f): f[4] for f in frames}
    for x, w, d, name, v in frames:
        # the frame below this one: the caller under its middle (x is rounded)
        mid = x + w / 2
        for p in by_depth[d - 1]:
            if p[0] <= mid <= p[0] + p[1]:
                own[id(p)] -= v
                break
    total = collections.Counter()
    for f in frames:
        if f[2]:
            total[f[3]] += own[id(f)]
    for name, v in total.most_common(n):
        print(f"{v}\t{name}")


if __name__ == "__main__":
    main()
