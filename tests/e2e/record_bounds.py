#!/usr/bin/env python3
"""record_bounds.py TRACE -- the top-level records of an .alys trace: one
line per record, "END_OFFSET TYPE" (TYPE: "header", or the record's type
number; 12 is a compressed block). Read independently of the converter (a
MessagePack walker of its own, no decoding of blocks), for the tests that
cut a trace and check that every complete record before the cut is used.
"""
import sys


def skip(b, i):
    """Offset after the MessagePack object at b[i]."""
    t = b[i]
    i += 1
    if t <= 0x7F or t >= 0xE0 or t in (0xC0, 0xC2, 0xC3):
        return i
    if 0x80 <= t <= 0x8F:
        return skip_n(b, i, 2 * (t & 0x0F))
    if 0x90 <= t <= 0x9F:
        return skip_n(b, i, t & 0x0F)
    if 0xA0 <= t <= 0xBF:
        return i + (t & 0x1F)
    fixed = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2, 0xD2: 4,
             0xD3: 8, 0xCA: 4, 0xCB: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9,
             0xD8: 17}
    if t in fixed:
        return i + fixed[t]
    sized = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4,
             0xC7: 1, 0xC8: 2, 0xC9: 4}
    if t in sized:
        w = sized[t]
        n = int.from_bytes(b[i:i + w], "big")
        return i + w + n + (1 if t in (0xC7, 0xC8, 0xC9) else 0)
    if t in (0xDC, 0xDD, 0xDE, 0xDF):
        w = 2 if t in (0xDC, 0xDE) else 4
        n = int.from_bytes(b[i:i + w], "big")
        return skip_n(b, i + w, n * (2 if t >= 0xDE else 1))
    raise ValueError(f"byte {i - 1}: not MessagePack (0x{t:02x})")


def skip_n(b, i, n):
    for _ in range(n):
        i = skip(b, i)
    return i


def main():
    b = open(sys.argv[1], "rb").read()
    i = skip(b, 0)
    print(i, "header")
    while i < len(b):
        # every record is an array whose first element is its type
        t = b[i]
        first = i + (1 if 0x90 <= t <= 0x9F else 3 if t == 0xDC else 5)
        rtype = b[first]
        i = skip(b, i)
        if i > len(b):
            break
        print(i, rtype)


if __name__ == "__main__":
    main()
