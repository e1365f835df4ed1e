#!/usr/bin/env python3
"""Check each event's collection number (gc_no) against the pauses around it.

Usage: gc_no_order.py TRACE.json   (alys_converter -f json)

A pause's gc_no is the collection that ran while the world was stopped
(read at the restart). A probe's program ends before the thread answers
the stop, so the collector cannot count that collection while one runs:
an event stamped before a pause's stop was read before it (its gc_no below
the pause's), and one stamped after the restart was read after it (its
gc_no the pause's or more). Events stamped in between (a thread resumed
before the restart's probe ran) prove nothing and are not judged; neither
are events of gc_no 0 (not known).

Prints key=value lines:
  events   events judged (gc_no known, against at least one pause)
  pauses   pauses in the trace
  early    events stamped before a pause's stop with its gc_no or more
  late     events stamped after a pause's restart with a gc_no below its
The first few of each are listed on stderr.
"""
import bisect
import json
import sys


def main(path):
    with open(path) as f:
        d = json.load(f)
    pauses = sorted((p['time_ns'], p['time_ns'] + p['duration_ns'], p['gc_no'])
                    for p in d['pauses'] if p['gc_no'])
    stops = [p[0] for p in pauses]
    starts = [p[1] for p in pauses]
    judged = early = late = 0
    for e in d['events']:
        g, t = e.get('gc_no', 0), e['time_ns']
        if not g or not pauses:
            continue
        judged += 1
        # the next pause to stop after it: its gc_no must be above the event's
        i = bisect.bisect_right(stops, t)
        if i < len(pauses) and g >= pauses[i][2]:
            early += 1
            if early <= 5:
                print(f'early: event {e["id"]} at {t} gc_no {g}, pause at {pauses[i][0]} '
                      f'gc_no {pauses[i][2]}', file=sys.stderr)
        # the last pause to restart before it: the event's gc_no is at least its
        j = bisect.bisect_left(starts, t) - 1
        if j >= 0 and g < pauses[j][2]:
            late += 1
            if late <= 5:
                print(f'late: event {e["id"]} at {t} gc_no {g}, pause restarted at '
                      f'{pauses[j][1]} gc_no {pauses[j][2]}', file=sys.stderr)
    print(f'events={judged}')
    print(f'pauses={len(pauses)}')
    print(f'early={early}')
    print(f'late={late}')


if __name__ == '__main__':
    main(sys.argv[1])
