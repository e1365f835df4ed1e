#!/usr/bin/env python3
"""Compare the allocations per distinct stack of a folded-stacks file with
what tests/programs/many_stacks.cr says it did (its OUT file).

Usage: stacks_truth.py FOLDED TRUTH

A stack's path is the sequence of its d<k> frames (*d0<...> .. *d3<...>),
outermost first, as in TRUTH ("-" for none); only stacks through leaf count.
Prints key=value lines:
  paths     paths in TRUTH
  stacks    folded lines through leaf (distinct stacks)
  exact     paths whose count equals TRUTH's
  wrong     paths whose count differs (first few listed on stderr)
  extra     stacks through leaf whose path is not in TRUTH
  events    allocation events in FOLDED (all lines)
  lost      of them, under [stack lost]
"""
import re
import sys

D = re.compile(r'\*d([0-3])<')


def main(folded, truth_path):
    truth = {}
    with open(truth_path) as f:
        for line in f:
            k, v = line.split()
            truth[k] = int(v)
    report(truth, len(truth),
           *count_folded(folded, lambda stack: ''.join(D.findall(stack)) or '-'))


def count_folded(folded, key_of):
    """Counts per key_of(stack) of the stacks through leaf, their number,
    all events and those under [stack lost] (also deep_truth.py's)."""
    got, stacks, events, lost = {}, 0, 0, 0
    with open(folded) as f:
        for line in f:
            stack, _, n = line.rstrip('\n').rpartition(' ')
            n = int(n)
            events += n
            if '[stack lost]' in stack:
                lost += n
            if '*leaf<' not in stack:
                continue
            stacks += 1
            k = key_of(stack)
            got[k] = got.get(k, 0) + n
    return got, stacks, events, lost


def report(truth, paths, got, stacks, events, lost):
    """Print the key=value lines (also deep_truth.py's)."""
    wrong = [k for k in truth if got.get(k) != truth[k]]
    for k in wrong[:5]:
        print(f'path {k}: {got.get(k)} in the trace, {truth[k]} in the program',
              file=sys.stderr)
    print(f'paths={paths}')
    print(f'stacks={stacks}')
    print(f'exact={len(truth) - len(wrong)}')
    print(f'wrong={len(wrong)}')
    print(f'extra={sum(1 for k in got if k not in truth)}')
    print(f'events={events}')
    print(f'lost={lost}')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
