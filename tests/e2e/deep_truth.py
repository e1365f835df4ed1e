#!/usr/bin/env python3
"""Compare the allocations per distinct stack of a folded-stacks file with
what tests/programs/deep_stacks.cr says it did (its OUT file).

Usage: deep_truth.py FOLDED TRUTH

A stack's path is the sequence of its r<k> frames (*r0<...> .. *r3<...>)
after the outermost one (main's call of r0), as TRUTH writes it; a stack
through *buf< counts as the path's buffer, any other through *leaf< as its
node. Prints key=value lines:
  paths     paths in TRUTH
  stacks    folded lines through leaf (distinct stacks)
  exact     stacks (two per path) whose count equals TRUTH's
  wrong     stacks whose count differs (first few listed on stderr)
  extra     stacks through leaf whose path is not in TRUTH
  events    allocation events in FOLDED (all lines)
  lost      of them, under [stack lost]
"""
import re
import sys

from stacks_truth import count_folded, report

R = re.compile(r'\*r([0-3])<')


def main(folded, truth_path):
    truth = {}
    with open(truth_path) as f:
        for line in f:
            k, nodes, bufs = line.split()
            truth[(k, 'node')] = int(nodes)
            truth[(k, 'buf')] = int(bufs)
    report(truth, len(truth) // 2, *count_folded(folded, lambda stack: (
        ''.join(R.findall(stack))[1:], 'buf' if '*buf<' in stack else 'node')))

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
