# liveness_truth.py TRACE.json PROGRAM.out -- compare the frees a trace
# inferred with what tests/programs/liveness.cr says it did (DROP/KEEP
# lines). Objects are matched by (address, gc_no at allocation), unique
# because a block is only reused after a collection. Prints one JSON object:
#   objects   lines of the program; traced: those with an allocation event
#   dropped / kept       traced objects dropped, never dropped
#   ontime    reported freed at the first collection after the drop
#   late      reported freed at a later collection (kept alive by a stale
#             conservative reference)
#   late_last of them, the last object of its batch (site and drop) freed
#             one collection late: the program's own stale register or
#             stack word, seen for every site at every round of a full trace
#   premature reported freed at or before the drop, or freed though kept
#   never     dropped but never reported freed
#   never_churn          of them, at the churn sites (temp_d's last
#             temporary may stay on the stack until exit, or not)
#   kept_freed           kept objects reported freed
#   causes    count of free events by cause
#   pct_ontime           10000 * ontime / (dropped - late_last): the share
#             on time of the objects the program no longer holds
import json, sys
d = json.load(open(sys.argv[1]))
truth = {}
last = {}   # (site, gc_no at drop) -> the batch's last object
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == 'DROP':
        truth[(int(f[2]), int(f[3]))] = (f[1], int(f[4]))
        last[(f[1], int(f[4]))] = (int(f[2]), int(f[3]))
    elif f[0] == 'KEEP':
        truth[(int(f[2]), int(f[3]))] = (f[1], None)
ev = d['events']
byid = {e['id']: e for e in ev}
seen = set()
ontime = late = late_last = premature = 0
freed = set()
for e in ev:
    if e['kind'] != 'free' or e.get('cause') not in ('collected', 'reused'):
        continue
    a = byid.get(e.get('prev_id'))
    if not a:
        continue
    k = (int(a['addr'], 16), a['gc_no'])
    if k not in truth:
        continue
    site, drop = truth[k]
    freed.add(k)
    c = e['collection']
    if drop is None or c <= drop:
        premature += 1
    elif c == drop + 1:
        ontime += 1
    else:
        late += 1
        if c == drop + 2 and last[(site, drop)] == k:
            late_last += 1
traced = set()
for e in ev:
    if e['kind'] in ('malloc', 'malloc_atomic'):
        k = (int(e['addr'], 16), e['gc_no'])
        if k in truth:
            traced.add(k)
dropped = [k for k, v in truth.items() if v[1] is not None and k in traced]
kept = [k for k, v in truth.items() if v[1] is None and k in traced]
causes = {}
for e in ev:
    if e['kind'] == 'free':
        causes[e['cause']] = causes.get(e['cause'], 0) + 1
print(json.dumps(dict(objects=len(truth), traced=len(traced), dropped=len(dropped), kept=len(kept),
    ontime=ontime, late=late, late_last=late_last, premature=premature,
    never=len([k for k in dropped if k not in freed]),
    never_churn=len([k for k in dropped if k not in freed and truth[k][0] != 'temp_d']),
    kept_freed=len([k for k in kept if k in freed]), causes=causes,
    pct_ontime=(10000 * ontime // (len(dropped) - late_last)) if len(dropped) > late_last else 0)))
