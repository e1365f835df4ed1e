#!/usr/bin/python3
"""A test backend for alys-bpf --push: Pyroscope's and Parca's push APIs,
refusing exactly what their servers refuse (the same status, code, message
and answer body) and recording what they would store.

  push_receiver.py --out DIR [--port N] [--port-file F] [--mode MODE]
                   [--token T] [--require-header 'Name: value']
                   [--clock-offset SECONDS] [--prefix /PATH] [--ui]
                   [--pyroscope-version 1|2]

Written from the servers' code (what each checks: docs/DESIGN.md, "Pushes"):
grafana/pyroscope v1.21.1 (and HEAD 3fe6a457 for v2), parca-dev/parca HEAD
3b5647cd (v0.28.0 differs in ValidatePprofProfile only), connect-go,
grpc-gateway v2, protobuf-go, grafana/dskit. Each function below names the
server function it mirrors.

POST PREFIX/push.v1.PusherService/Push  -- Pyroscope (Connect, unary):
  connect-go: POST only (405 + Allow), Content-Type application/json,
    application/json; charset=utf-8 or application/proto (415 + Accept-Post,
    no body), Content-Encoding gzip or identity (501 otherwise), a 256 MiB
    message limit (429), protojson with unknown fields ignored (errors 400
    "unmarshal message: unmarshal into *pushv1.PushRequest: proto: ...",
    positions as protobuf-go gives them); application/proto decoded as
    vtproto does. X-Scope-OrgID is ignored (multitenancy off: "anonymous").
  Distributor.Push: each rawProfile gzipped or not (RawFromBytesWithLimit:
    "gzip reset: ...", "copy to buffer: ..." and protobuf errors are 500
    "unknown"; over 4 MiB uncompressed: 400 "uncompressed profile payload
    size exceeds limit of 4.2 MB"), 256 MiB over the request, "no profiles
    received"; the errors combined as dskit's multierror and connect-go's
    wire error pick them (the first coded error wins, else 500).
  pushSeries, per raw profile: service_name "unknown_service" when absent
    or empty, the ingestion rate limit (a token bucket of 4 MiB/s, burst
    2 MiB, over labels + profile bytes: one profile over 2 MiB is always 429
    "push rate limit (4.0 MiB) exceeded while adding 2.5 MiB"),
    ValidateProfile (its order and messages: empty profile, the ingestion
    window now-1h..now+10m exclusive on the server's clock = host clock +
    --clock-offset, only when time_nanos > 0, size, 16000 samples, 100
    labels a sample, stack depth cut to 1000, strings cut to 65535 bytes,
    location/function id 0, value count, string 0, string indices, "sample
    type contains -", UTF-8), Normalize (samples with a negative value or
    only zeros dropped, numeric and empty sample labels dropped, duplicates
    merged, sanitizeProfile's drops: empty locations, unknown mappings or
    functions, samples pointing at them), nothing stored and 200 if no
    sample is left, __session_id__ removed, then per sample-label group
    the default relabel rules (godeltaprof_*, wall/cpu) and ValidateLabels
    (30 names, name 1024 and value 2048 bytes, __name__ and service_name,
    v1's legacy charset with dots made underscores and its clash rule, or
    v2's any UTF-8 name, duplicates).
  Storage: one series per sample type, NAME:TYPE:UNIT:PERIOD_TYPE:PERIOD_UNIT
    (pkg/phlaredb/labels CreateProfileLabels); zero values not stored.
    --pyroscope-version 1 (default, the ingester path): __delta__ != "false"
    on __name__="memory" alloc_objects/alloc_space makes the server diff
    against the series' previous push (pkg/phlaredb/delta.go): the first
    push of a series, and a push after a value went down, store nothing.
    --pyroscope-version 2: no label sanitization (any UTF-8 name, dots
    kept), no server-side delta. __delta__ is never stored.
  Answers: 200 "{}" (the request's content type), errors as Connect JSON
    {"code":"invalid_argument","message":...} (application/json) with the
    code's status (400, 401, 429, 500, 501).

POST PREFIX/api/profiles/writeraw  -- Parca (grpc-gateway v2 under /api):
  any Content-Type but application/grpc* read as JSON (encoding/json's
    syntax messages, then protojson's), an empty body is an empty request;
    labels nested {"labels":{"labels":[...]}}; the gRPC hop's 64 MiB
    message limit (429 code 8).
  NormalizeWriteRawRequest: per series "invalid label name: N" (empty
    only: Prometheus' UTF-8 scheme), "duplicate label name: N", "missing
    __name__ label"; per sample gzip by its magic ("decompressing profile:
    ..." 500 code 2), "failed to parse profile: ..." (vtproto's words), then
    ValidatePprofProfile's checks in order, "invalid profile: ..." (string 0,
    mapping/function/location ids 1..n in table order, string indices,
    executable_info count, "missing sample type information", value counts,
    location ids non-zero and in range, label keys); NormalizePprof: zero
    values dropped, negative ones kept; then writeSeries' profile type check
    (the PromQL metric name charset: 500 code 2 "invalid profile type at
    row ..."). All or nothing over the request. A series without a labels
    object, negative string indices or sample types with an empty string
    table crash the real server (a nil or out-of-range dereference in a
    handler goroutine, no recover): answered 500 code 13 here, "... (Parca's
    process would crash here)".
  Series: NAME:TYPE:UNIT:PERIOD_TYPE:PERIOD_UNIT, ":delta" appended when
    duration_nanos != 0. No time window, no label limits.
  Answers: 200 "{}", errors {"code":N,"message":...,"details":[]}
    (application/json): code 3 400, 2 500, 8 429, 13 500; GET 501 code 12.

Other paths: 404 "not found: PATH"; with --ui, what Parca's router gives a
path none of its handlers serves: 200 with its web UI's page (text/html),
for any path under the prefix (a wrong /api/... one too: the UI's "/"
pattern is a subtree), Go's plain "404 page not found" outside the prefix.
--prefix serves both APIs under a path prefix (Parca's --path-prefix, or a
reverse proxy). --token (401) and --require-header (403) stand for a proxy
in front of either server.

Recorded, in DIR:
  N.pb.gz (the rawProfile's bytes as received) and a line of index.jsonl
    for every raw profile the server took: n, api, labels (as stored:
    Pyroscope's after the defaults, relabeling and sanitizing, without
    __delta__; Parca's label columns, __name__ apart in "name"),
    sent_labels, t, time_nanos (as stored), duration_nanos, period_type,
    totals ({sample type: sum of the stored values}), sent_totals, series
    (the profile type names), stored ({series: stored anything}),
    dropped_samples, merged_samples (Pyroscope), label_sets (Pyroscope: one
    per sample-label group).
  requests.jsonl: one line a request (path, status, text: the message, t).

MODE (what a failing server does to every POST): ok (default), close
(drops the connection unanswered), slow:S (answers after S seconds),
status:CODE (answers CODE), html (200 with an HTML page: a web UI), empty
(200, no body), redirect (302 to /login).

Not implemented: Pyroscope's multitenancy (X-Scope-OrgID is ignored, as by
default), usage groups, ingest and series limits, aggregation, sampling,
FixGoProfile (Go profiles' frames), the v1 head's rotation (a delta baseline
lasts as long as the receiver), answers compressed for Accept-Encoding;
connect-go's gRPC and gRPC-Web protocols and Parca's grpc-web (501 here;
Parca's plain application/grpc over HTTP/1.1 is answered as grpc-go does,
505); Parca's ingest (frostdb) errors and its 5 s read timeout. Close to but
not the servers' own: the PromQL parser's wording after "invalid profile
type at row N (TYPE): ", flate's corrupt-input offset, the order of several
failing series' errors (Pyroscope runs them concurrently), the size limit
checked on the bytes received rather than SizeVT() of the decoded profile,
and protobuf-go's "proto: " prefix, which a server binary may spell with a
non-breaking space (detrand).
"""
import argparse
import base64
import bisect
import datetime
import decimal
import json
import math
import os
import re
import socket
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pprof_text  # noqa: E402

PYROSCOPE_PATH = "/push.v1.PusherService/Push"
PARCA_PATH = "/api/profiles/writeraw"
MAX_READ = 300 << 20            # the receiver's own cap on a body it reads
MIB = 1 << 20
UI_PAGE = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<title>Parca</title></head><body><div id=\"root\"></div></body></html>")

# Pyroscope's defaults: pkg/validation/limits.go (*Limits).RegisterFlags
P_BODY_LIMIT = 256 * MIB                # distributor.ingestion-body-limit-mb
P_MAX_PROFILE_BYTES = 4194304           # validation.max-profile-size-bytes
P_MAX_SAMPLES = 16000                   # validation.max-profile-stacktrace-samples
P_MAX_SAMPLE_LABELS = 100               # validation.max-profile-stacktrace-sample-labels
P_MAX_DEPTH = 1000                      # validation.max-profile-stacktrace-depth
P_MAX_SYMBOL = 65535                    # validation.max-profile-symbol-value-length
P_MAX_LABELS = 30                       # validation.max-label-names-per-series
P_MAX_NAME = 1024                       # validation.max-length-label-name
P_MAX_VALUE = 2048                      # validation.max-length-label-value
P_OLDER_MS = 3600 * 1000                # validation.reject-older-than 1h
P_NEWER_MS = 600 * 1000                 # validation.reject-newer-than 10m
P_RATE = 4 * MIB                        # distributor.ingestion-rate-limit-mb
P_BURST = 2 * MIB                       # distributor.ingestion-burst-size-mb
# Parca: pkg/debuginfo/client.go MaxMsgSize, the gRPC server's MaxRecvMsgSize
PARCA_MAX_MSG = 64 * MIB

CONNECT_HTTP = {"canceled": 499, "unknown": 500, "invalid_argument": 400,
                "deadline_exceeded": 504, "not_found": 404, "already_exists": 409,
                "permission_denied": 403, "resource_exhausted": 429,
                "failed_precondition": 400, "aborted": 409, "out_of_range": 400,
                "unimplemented": 501, "internal": 500, "unavailable": 503,
                "data_loss": 500, "unauthenticated": 401}
GRPC_HTTP = {0: 200, 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429,
             9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401}
CONNECT_CODECS = {"application/json": "json", "application/json; charset=utf-8": "json",
                  "application/proto": "proto"}
ACCEPT_POST = ", ".join(sorted(
    ["application/json", "application/json; charset=utf-8", "application/proto"] +
    [p + s for p in ("application/grpc", "application/grpc-web")
     for s in ("", "+json", "+json; charset=utf-8", "+proto")]))


# --- errors as the Go servers build them -----------------------------------

class GoError(Exception):
    """A Go error: its Error() text, and what errors.As finds in it: a
    connect code (connect.Error), a validation reason (validation.Error),
    the errors it wraps."""

    def __init__(self, msg, code=None, reason=None, wrapped=()):
        super().__init__(msg)
        self.msg, self.code, self.reason, self.wrapped = msg, code, reason, list(wrapped)

    def walk(self):
        yield self
        for w in self.wrapped:
            yield from w.walk()


def connect_error(code, inner):
    """connect.NewError(code, inner): Error() is "code: inner", Message() inner."""
    if not isinstance(inner, GoError):
        inner = GoError(inner)
    e = GoError(code + ": " + inner.msg, code=code, wrapped=[inner])
    e.message = inner.msg
    return e


def validation_error(reason, msg):
    """pkg/validation/validate.go NewErrorf"""
    return GoError(msg, reason=reason)


def multi_error(errs):
    """dskit multierror: flattened, "N errors: a; b", Unwrap() []error"""
    if len(errs) == 1:
        return GoError(errs[0].msg, wrapped=errs)
    return GoError("%d errors: " % len(errs) + "; ".join(e.msg for e in errs), wrapped=errs)


class GrpcError(Exception):
    """A gRPC status reaching grpc-gateway: code and message."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code, self.msg = code, msg


class GoPanic(Exception):
    """A Go runtime panic (its "runtime error: ..." text)."""


def go_index(table, i):
    """table[i] as Go does it: a panic out of range."""
    if i < 0:
        raise GoPanic("runtime error: index out of range [%d]" % i)
    if i >= len(table):
        raise GoPanic("runtime error: index out of range [%d] with length %d" % (i, len(table)))
    return table[i]


# --- Go's formatting -------------------------------------------------------

def bstr(s):
    """The bytes of a Go string kept in a str (invalid UTF-8 as surrogateescapes)."""
    return s.encode("utf-8", "surrogateescape")


def utf8_valid(s):
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def go_quote(s, q='"'):
    """strconv.Quote (and %q): s a str (invalid UTF-8 as surrogateescapes) or bytes."""
    if isinstance(s, (bytes, bytearray)):
        s = bytes(s).decode("utf-8", "surrogateescape")
    out = [q]
    for ch in s:
        c = ord(ch)
        if 0xDC80 <= c <= 0xDCFF:
            out.append("\\x%02x" % (c - 0xDC00))
        elif ch == q or ch == "\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                        "\t": "\\t", "\v": "\\v"}[ch])
        elif c < 0x20 or c == 0x7F:
            out.append("\\x%02x" % c)
        elif c < 0x10000:
            out.append("\\u%04x" % c)
        else:
            out.append("\\U%08x" % c)
    return "".join(out) + q


def go_humanize(n, si):
    """go-humanize Bytes (SI) and IBytes (IEC)"""
    base, sizes = (1000, ["B", "kB", "MB", "GB", "TB", "PB", "EB"]) if si else \
        (1024, ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"])
    if n < 10:
        return "%d B" % n
    e = math.floor(math.log(n) / math.log(base))
    val = math.floor(n / base ** e * 10 + 0.5) / 10
    return ("%.1f %s" if val < 10 else "%.0f %s") % (val, sizes[int(e)])


def go_time_millis(ms):
    """pkg/util/time.go FormatTimeMillis: time.Time.String() in UTC"""
    sec, frac = divmod(ms, 1000)
    try:
        s = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, ValueError, OSError):
        s = "(year out of range: %d s)" % sec
    if frac:
        s += ("." + "%03d" % frac).rstrip("0")
    return s + " +0000 UTC"


def go_json(obj):
    """encoding/json Marshal of strings: <, >, & and U+2028/9 escaped, invalid UTF-8 as U+FFFD."""
    def fix(o):
        if isinstance(o, str):
            return bstr(o).decode("utf-8", "replace")
        if isinstance(o, dict):
            return {k: fix(v) for k, v in o.items()}
        return o
    t = json.dumps(fix(obj), ensure_ascii=False, separators=(",", ":"))
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        t = t.replace(a, b)
    return t


# --- compress/gzip ---------------------------------------------------------

class GzipError(Exception):
    """compress/gzip's (or compress/flate's) error; header: while opening."""

    def __init__(self, msg, header=False):
        super().__init__(msg)
        self.msg, self.header = msg, header


def go_gunzip(data, limit=None):
    """compress/gzip Reader (multistream) read to the end, as io.Copy does;
    with limit, reading stops after limit+1 bytes (io.LimitReader)."""
    out = bytearray()
    pos, first = 0, True
    while True:
        left = len(data) - pos
        if left == 0 and not first:
            return bytes(out)
        if left < 10:
            raise GzipError("EOF" if left == 0 else "unexpected EOF", first)
        h = data[pos:pos + 10]
        if h[0] != 0x1F or h[1] != 0x8B or h[2] != 8:
            raise GzipError("gzip: invalid header", first)
        flg, p = h[3], pos + 10
        if flg & 4:
            if len(data) < p + 2:
                raise GzipError("unexpected EOF", first)
            p += 2 + int.from_bytes(data[p:p + 2], "little")
            if len(data) < p:
                raise GzipError("unexpected EOF", first)
        for bit in (8, 16):
            if flg & bit:
                z = data.find(b"\0", p)
                if z < 0:
                    raise GzipError("unexpected EOF", first)
                p = z + 1
        if flg & 2:
            if len(data) < p + 2:
                raise GzipError("unexpected EOF", first)
            if int.from_bytes(data[p:p + 2], "little") != zlib.crc32(data[pos:p]) & 0xFFFF:
                raise GzipError("gzip: invalid header", first)
            p += 2
        first = False
        d = zlib.decompressobj(-15)
        chunk = bytearray()
        try:
            buf = data[p:]
            while True:
                want = 0 if limit is None else max(1, limit + 1 - len(out) - len(chunk))
                chunk += d.decompress(buf, want)
                if limit is not None and len(out) + len(chunk) > limit:
                    out += chunk
                    return bytes(out[:limit + 1])
                buf = d.unconsumed_tail
                if d.eof or not buf:
                    break
        except zlib.error:
            raise GzipError("flate: corrupt input before offset %d"
                            % (len(data) - p - len(d.unconsumed_tail)))
        if not d.eof:
            raise GzipError("unexpected EOF")
        tail = d.unused_data
        if len(tail) < 8:
            raise GzipError("unexpected EOF")
        if int.from_bytes(tail[:4], "little") != zlib.crc32(chunk) or \
                int.from_bytes(tail[4:8], "little") != len(chunk) & 0xFFFFFFFF:
            raise GzipError("gzip: invalid checksum")
        out += chunk
        pos = len(data) - len(tail) + 8


# --- vtproto's UnmarshalVT (what both servers parse profiles with) ---------

class VtError(Exception):
    pass


M64 = (1 << 64) - 1
ERR_OVERFLOW = "proto: integer overflow"
ERR_LENGTH = "proto: negative length found during unmarshaling"
ERR_EOF = "unexpected EOF"

# field number: (Go field name, kind, message); kinds: msg, bytes, string,
# varint, packed (a repeated scalar, packed or not)
PPROF_WIRE = {
    "Profile": {1: ("SampleType", "msg", "ValueType"), 2: ("Sample", "msg", "Sample"),
                3: ("Mapping", "msg", "Mapping"), 4: ("Location", "msg", "Location"),
                5: ("Function", "msg", "Function"), 6: ("StringTable", "bytes"),
                7: ("DropFrames", "varint"), 8: ("KeepFrames", "varint"),
                9: ("TimeNanos", "varint"), 10: ("DurationNanos", "varint"),
                11: ("PeriodType", "msg", "ValueType"), 12: ("Period", "varint"),
                13: ("Comment", "packed"), 14: ("DefaultSampleType", "varint")},
    "ValueType": {1: ("Type", "varint"), 2: ("Unit", "varint")},
    "Sample": {1: ("LocationId", "packed"), 2: ("Value", "packed"), 3: ("Label", "msg", "Label")},
    "Label": {1: ("Key", "varint"), 2: ("Str", "varint"), 3: ("Num", "varint"),
              4: ("NumUnit", "varint")},
    "Mapping": {1: ("Id", "varint"), 2: ("MemoryStart", "varint"), 3: ("MemoryLimit", "varint"),
                4: ("FileOffset", "varint"), 5: ("Filename", "varint"), 6: ("BuildId", "varint"),
                7: ("HasFunctions", "varint"), 8: ("HasFilenames", "varint"),
                9: ("HasLineNumbers", "varint"), 10: ("HasInlineFrames", "varint")},
    "Location": {1: ("Id", "varint"), 2: ("MappingId", "varint"), 3: ("Address", "varint"),
                 4: ("Line", "msg", "Line"), 5: ("IsFolded", "varint")},
    "Line": {1: ("FunctionId", "varint"), 2: ("Line", "varint")},
    "Function": {1: ("Id", "varint"), 2: ("Name", "varint"), 3: ("SystemName", "varint"),
                 4: ("Filename", "varint"), 5: ("StartLine", "varint")},
}
# api/push/v1/push.proto, api/types/v1/types.proto
PUSH_WIRE = {
    "PushRequest": {1: ("Series", "msg", "RawProfileSeries")},
    "RawProfileSeries": {1: ("Labels", "msg", "LabelPair"), 2: ("Samples", "msg", "RawSample"),
                         3: ("Annotations", "msg", "ProfileAnnotation")},
    "LabelPair": {1: ("Name", "string"), 2: ("Value", "string")},
    "RawSample": {1: ("RawProfile", "bytes"), 2: ("ID", "string")},
    "ProfileAnnotation": {1: ("Key", "string"), 2: ("Value", "string")},
}


def vt_varint(b, i, end):
    v = shift = 0
    while True:
        if shift >= 64:
            raise VtError(ERR_OVERFLOW)
        if i >= end:
            raise VtError(ERR_EOF)
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v & M64, i
        shift += 7


def vt_length(b, i, end):
    n, i = vt_varint(b, i, end)
    if n >= 1 << 63:
        raise VtError(ERR_LENGTH)
    post = i + n
    if post >= 1 << 63:
        raise VtError(ERR_LENGTH)
    if post > end:
        raise VtError(ERR_EOF)
    return i, post


def vt_skip(b, i, end):
    """github.com/planetscale/vtprotobuf protohelpers.Skip: the end of one unknown field"""
    depth = 0
    while i < end:
        wire, i = vt_varint(b, i, end)
        wt = wire & 7
        if wt == 0:
            _, i = vt_varint(b, i, end)
        elif wt == 1:
            i += 8
        elif wt == 2:
            n, i = vt_varint(b, i, end)
            if n >= 1 << 63:
                raise VtError(ERR_LENGTH)
            i += n
        elif wt == 3:
            depth += 1
        elif wt == 4:
            if depth == 0:
                raise VtError("proto: unexpected end of group")
            depth -= 1
        elif wt == 5:
            i += 4
        else:
            raise VtError("proto: illegal wireType %d" % wt)
        if depth == 0:
            if i > end:
                raise VtError(ERR_EOF)
            return i
    raise VtError(ERR_EOF)


def vt_unmarshal(b, schema, msg, start=0, end=None, collect=True, spans=None):
    """(*msg).UnmarshalVT as vtprotobuf generates it: {Go field name: [values]}
    (message values dicts, varints uint64, strings/bytes bytes); raises
    VtError with its words. collect=False checks only (top-level bytes fields
    still collected); spans gets the top-level fields' (number, start, end)."""
    end = len(b) if end is None else end
    fields, out, i = schema[msg], {}, start
    while i < end:
        pre = i
        wire, i = vt_varint(b, i, end)
        num = (wire >> 3) & 0xFFFFFFFF
        num = num - (1 << 32) if num >= 1 << 31 else num
        wt = wire & 7
        if wt == 4:
            raise VtError("proto: %s: wiretype end group for non-group" % msg)
        if num <= 0:
            raise VtError("proto: %s: illegal tag %d (wire type %d)" % (msg, num, wire))
        f = fields.get(num)
        if f is None:
            i = vt_skip(b, pre, end)
        elif f[1] in ("msg", "bytes", "string"):
            if wt != 2:
                raise VtError("proto: wrong wireType = %d for field %s" % (wt, f[0]))
            i, post = vt_length(b, i, end)
            if f[1] == "msg":
                sub = vt_unmarshal(b, schema, f[2], i, post, collect)
                if collect:
                    out.setdefault(f[0], []).append(sub)
            elif collect or spans is not None:
                out.setdefault(f[0], []).append(bytes(b[i:post]))
            i = post
        elif f[1] == "varint":
            if wt != 0:
                raise VtError("proto: wrong wireType = %d for field %s" % (wt, f[0]))
            v, i = vt_varint(b, i, end)
            if collect:
                out.setdefault(f[0], []).append(v)
        else:  # packed
            if wt == 0:
                v, i = vt_varint(b, i, end)
            elif wt == 2:
                i, post = vt_length(b, i, end)
                seg = b[i:post]
                if (post > i and seg[-1] >= 0x80) or re.search(rb"[\x80-\xff]{10}", bytes(seg)):
                    while i < post:     # the slow way: where vtproto stops
                        v, i = vt_varint(b, i, end)
                i = max(i, post)
            else:
                raise VtError("proto: wrong wireType = %d for field %s" % (wt, f[0]))
        if spans is not None:
            spans.append((num, pre, i))
    if i > end:
        raise VtError(ERR_EOF)
    return out


def pb_varint(n):
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append(n & 0x7F | 0x80)
        n >>= 7


def decode_pprof(data):
    """The profile both servers' UnmarshalVT would see: its wire format
    checked as vtproto does (VtError), the string table as raw bytes (vtproto
    does not check UTF-8), the rest decoded by protoc (tests/pprof_text.py),
    which keeps each repeated field's order. -> (protoc's dict, string bytes)."""
    spans = []
    top = vt_unmarshal(memoryview(data), PPROF_WIRE, "Profile", collect=False, spans=spans)
    strings = top.get("StringTable", [])
    if not all(utf8_valid(s.decode("utf-8", "surrogateescape")) for s in strings):
        # protoc refuses invalid UTF-8 in a proto3 string: the same table, valid
        fixed = bytearray()
        for num, a, b in spans:
            if num == 6:
                s = bytes(data[a:b])
                _, i = vt_varint(s, 0, len(s))
                _, i = vt_varint(s, i, len(s))
                v = s[i:].decode("utf-8", "replace").encode()
                fixed += b"\x32" + pb_varint(len(v)) + v
            else:
                fixed += data[a:b]
        data = bytes(fixed)
    try:
        p = pprof_text.decode(data)
    except subprocess.CalledProcessError as e:
        raise VtError("proto: %s (protoc's words: vtproto took it)"
                      % e.stderr.decode(errors="replace").strip().replace("\n", " "))
    return p, strings


def one(m, k, default=0):
    return m.get(k, [default])[0]


class Prof:
    """A decoded pprof: string table (str, invalid UTF-8 as surrogateescapes),
    and the tables as lists of dicts in their order in the message."""

    def __init__(self, p, strings, raw_size):
        self.raw_size = raw_size
        self.st_raw = list(strings)
        self.st = [s.decode("utf-8", "surrogateescape") for s in strings]
        self.sample_type = [[one(v, "type"), one(v, "unit")] for v in p.get("sample_type", [])]
        self.sample = [{"loc": list(s.get("location_id", [])), "val": list(s.get("value", [])),
                        "label": [[one(l, "key"), one(l, "str"), one(l, "num"), one(l, "num_unit")]
                                  for l in s.get("label", [])]} for s in p.get("sample", [])]
        self.mapping = [{k: one(m, k) for k in ("id", "memory_start", "memory_limit", "file_offset",
                                                 "filename", "build_id", "has_functions")}
                        for m in p.get("mapping", [])]
        self.location = [{"id": one(l, "id"), "mapping_id": one(l, "mapping_id"),
                          "address": one(l, "address"),
                          "line": [[one(x, "function_id"), one(x, "line")] for x in l.get("line", [])]}
                         for l in p.get("location", [])]
        self.function = [{k: one(f, k) for k in ("id", "name", "system_name", "filename", "start_line")}
                         for f in p.get("function", [])]
        self.time_nanos = one(p, "time_nanos")
        self.duration_nanos = one(p, "duration_nanos")
        self.period = one(p, "period")
        pt = p.get("period_type")
        self.period_type = [one(pt[0], "type"), one(pt[0], "unit")] if pt else None
        self.sent_totals = {self.s(t): 0 for t, _ in self.sample_type}
        for s in self.sample:
            for (t, _), v in zip(self.sample_type, s["val"]):
                self.sent_totals[self.s(t)] += v

    def s(self, i):
        """string_table[i], "" out of range (for the record only)"""
        return self.st[i] if 0 <= i < len(self.st) else ""


# --- protobuf-go's protojson decoder (both servers' JSON) -------------------

class PJError(Exception):
    pass


(T_EOF, T_NULL, T_BOOL, T_NUMBER, T_STRING, T_NAME, T_OBJ_OPEN, T_OBJ_CLOSE, T_ARR_OPEN,
 T_ARR_CLOSE, T_COMMA) = (1 << i for i in range(11))
T_SCALAR = T_NULL | T_BOOL | T_NUMBER | T_STRING
PJ_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]*)?")
PJ_ERRTOK = re.compile(rb"[-+._a-zA-Z0-9]{1,32}")
PJ_STOP = re.compile(rb'["\\\x00-\x1f]')


class Tok:
    __slots__ = ("kind", "pos", "size", "val", "d")

    def __init__(self, kind, pos=0, size=0, val=None, d=None):
        self.kind, self.pos, self.size, self.val, self.d = kind, pos, size, val, d

    def raw(self):
        return self.d.orig[self.pos:self.pos + self.size].decode("utf-8", "replace")


class PJDecoder:
    """google.golang.org/protobuf internal/encoding/json Decoder"""

    def __init__(self, data):
        self.orig, self.i = data, 0
        self.stack, self.last, self.peeked = [], Tok(0), None

    def position(self, idx):
        b = self.orig[:idx]
        line = b.count(b"\n") + 1
        b = b[b.rfind(b"\n") + 1:]
        return line, sum(1 for c in b if c & 0xC0 != 0x80) + 1

    def syntax_error(self, pos, msg):
        return PJError("proto: syntax error (line %d:%d): %s" % (self.position(pos) + (msg,)))

    def new_error(self, pos, msg):
        return PJError("proto: (line %d:%d): %s" % (self.position(pos) + (msg,)))

    def unexpected(self, tok):
        return self.syntax_error(tok.pos, "unexpected token " + tok.raw())

    def consume(self, n):
        self.i += n
        b = self.orig
        while self.i < len(b) and b[self.i] in b" \n\r\t":
            self.i += 1

    def peek(self):
        if self.peeked is None:
            try:
                self.peeked = (self._read(), None)
            except PJError as e:
                self.peeked = (None, e)
        return self.peeked

    def read(self):
        if self.peeked is not None:
            tok, err = self.peeked
            self.peeked = None
            if err:
                raise err
            return tok
        return self._read()

    def value_next(self):
        if not self.stack:
            return self.last.kind == 0
        if self.stack[-1] == T_OBJ_OPEN:
            return self.last.kind & T_NAME != 0
        return self.last.kind & (T_ARR_OPEN | T_COMMA) != 0

    def _read(self):
        tok = self.parse_next()
        k = tok.kind
        if k == T_EOF:
            if self.stack:
                raise PJError("proto: " + ERR_EOF)
        elif k in (T_NULL, T_BOOL, T_NUMBER):
            if not self.value_next():
                raise self.unexpected(tok)
        elif k == T_STRING:
            if not self.value_next():
                if self.last.kind & (T_OBJ_OPEN | T_COMMA) == 0:
                    raise self.unexpected(tok)
                if self.i >= len(self.orig):
                    raise PJError("proto: " + ERR_EOF)
                if self.orig[self.i] != ord(":"):
                    raise self.syntax_error(self.i, 'unexpected character %s, missing ":" after '
                                            "field name" % chr(self.orig[self.i]))
                tok.kind = T_NAME
                self.consume(1)
        elif k in (T_OBJ_OPEN, T_ARR_OPEN):
            if not self.value_next():
                raise self.unexpected(tok)
            self.stack.append(k)
        elif k == T_OBJ_CLOSE:
            if not self.stack or self.last.kind & (T_NAME | T_COMMA) or self.stack[-1] != T_OBJ_OPEN:
                raise self.unexpected(tok)
            self.stack.pop()
        elif k == T_ARR_CLOSE:
            if not self.stack or self.last.kind == T_COMMA or self.stack[-1] != T_ARR_OPEN:
                raise self.unexpected(tok)
            self.stack.pop()
        elif k == T_COMMA:
            if not self.stack or self.last.kind & (T_SCALAR | T_OBJ_CLOSE | T_ARR_CLOSE) == 0:
                raise self.unexpected(tok)
        self.last = tok
        if k == T_COMMA:
            return self._read()
        return tok

    def token(self, kind, n, val=None):
        t = Tok(kind, self.i, n, val, self)
        self.consume(n)
        return t

    def parse_next(self):
        self.consume(0)
        b, i = self.orig, self.i
        if i >= len(b):
            return self.token(T_EOF, 0)
        c = b[i]
        for word, kind, val in ((b"null", T_NULL, None), (b"true", T_BOOL, True),
                                (b"false", T_BOOL, False)):
            if c == word[0] and b.startswith(word, i) and \
                    (i + len(word) == len(b) or not is_not_delim(b[i + len(word)])):
                return self.token(kind, len(word), val)
        if c == ord("-") or 0x30 <= c <= 0x39:
            m = PJ_NUMBER.match(b, i)
            if m and (m.end() == len(b) or not is_not_delim(b[m.end()])):
                return self.token(T_NUMBER, m.end() - i, m.group().decode())
        elif c == ord('"'):
            s, n = self.parse_string()
            return self.token(T_STRING, n, s)
        elif c in b"{}[],":
            return self.token({ord("{"): T_OBJ_OPEN, ord("}"): T_OBJ_CLOSE, ord("["): T_ARR_OPEN,
                               ord("]"): T_ARR_CLOSE, ord(","): T_COMMA}[c], 1)
        m = PJ_ERRTOK.match(b, i)
        bad = m.group() if m else b[i:i + 1]
        if not m and c >= 0x80:
            for n in (4, 3, 2):
                try:
                    bad = b[i:i + n].decode()
                    bad = bad.encode()
                    break
                except UnicodeDecodeError:
                    pass
        raise self.syntax_error(i, "invalid value " + bad.decode("utf-8", "replace"))

    def parse_string(self):
        """internal/encoding/json parseString: errors at the string's start"""
        b, start = self.orig, self.i
        j, out = start + 1, []
        while True:
            m = PJ_STOP.search(b, j)
            try:
                out.append(b[j:m.start() if m else len(b)].decode("utf-8"))
            except UnicodeDecodeError:
                raise self.syntax_error(start, "invalid UTF-8 in string")
            if not m:
                raise PJError("proto: " + ERR_EOF)
            j, c = m.start(), b[m.start()]
            if c == ord('"'):
                return "".join(out), j + 1 - start
            if c < 0x20:
                raise self.syntax_error(start, "invalid character %s in string"
                                        % go_quote(chr(c), "'"))
            if j + 1 >= len(b):
                raise PJError("proto: " + ERR_EOF)
            e = b[j + 1]
            simple = {ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b",
                      ord("f"): "\f", ord("n"): "\n", ord("r"): "\r", ord("t"): "\t"}
            if e in simple:
                out.append(simple[e])
                j += 2
                continue
            if e != ord("u"):
                raise self.syntax_error(start, "invalid escape code %s in string" % go_quote(b[j:j + 2]))
            if len(b) - j < 6:
                raise PJError("proto: " + ERR_EOF)
            r = hex4(b[j + 2:j + 6])
            if r is None:
                raise self.syntax_error(start, "invalid escape code %s in string" % go_quote(b[j:j + 6]))
            j += 6
            if 0xD800 <= r < 0xE000:
                if len(b) - j < 6:
                    raise PJError("proto: " + ERR_EOF)
                r2 = hex4(b[j + 2:j + 6])
                ok = b[j:j + 2] == b"\\u" and r2 is not None and \
                    0xD800 <= r < 0xDC00 and 0xDC00 <= r2 < 0xE000
                if not ok:
                    raise self.syntax_error(start, "invalid escape code %s in string"
                                            % go_quote(b[j:j + 6]))
                r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00)
                j += 6
            out.append(chr(r))


def is_not_delim(c):
    return c in b"-+._" or 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A


def hex4(b):
    return int(b, 16) if re.fullmatch(rb"[0-9a-fA-F]{4}", b) else None


def json_name(proto_name):
    """protoc's JSON name: lowerCamelCase of the field name"""
    out, up = [], False
    for ch in proto_name:
        if ch == "_":
            up = True
        else:
            out.append(ch.upper() if up else ch)
            up = False
    return "".join(out)


def pj_schema(spec):
    """{message: [(proto name, number, kind, repeated, message)]} -> lookups"""
    out = {}
    for msg, fields in spec.items():
        by = {}
        for f in fields:
            by.setdefault(json_name(f[0]), f)
        for f in fields:
            by.setdefault(f[0], f)
        out[msg] = by
    return out


# api/push/v1/push.proto, api/types/v1/types.proto
PUSH_JSON = pj_schema({
    "PushRequest": [("series", 1, "msg", True, "RawProfileSeries")],
    "RawProfileSeries": [("labels", 1, "msg", True, "LabelPair"),
                         ("samples", 2, "msg", True, "RawSample"),
                         ("annotations", 3, "msg", True, "ProfileAnnotation")],
    "LabelPair": [("name", 1, "string", False, None), ("value", 2, "string", False, None)],
    "RawSample": [("raw_profile", 1, "bytes", False, None), ("ID", 2, "string", False, None)],
    "ProfileAnnotation": [("key", 1, "string", False, None), ("value", 2, "string", False, None)],
})
# parca proto/parca/profilestore/v1alpha1/profilestore.proto
PARCA_JSON = pj_schema({
    "WriteRawRequest": [("tenant", 1, "string", False, None),
                        ("series", 2, "msg", True, "RawProfileSeries"),
                        ("normalized", 3, "bool", False, None)],
    "RawProfileSeries": [("labels", 1, "msg", False, "LabelSet"),
                         ("samples", 2, "msg", True, "RawSample")],
    "LabelSet": [("labels", 1, "msg", True, "Label")],
    "Label": [("name", 1, "string", False, None), ("value", 2, "string", False, None)],
    "RawSample": [("raw_profile", 1, "bytes", False, None),
                  ("executable_info", 2, "msg", True, "ExecutableInfo")],
    "ExecutableInfo": [("elf_type", 1, "uint32", False, None),
                       ("load_segment", 2, "msg", False, "LoadSegment")],
    "LoadSegment": [("offset", 1, "uint64", False, None), ("vaddr", 2, "uint64", False, None)],
})


def protojson_unmarshal(data, schema, msg):
    """encoding/protojson UnmarshalOptions{DiscardUnknown: true}.Unmarshal"""
    d = PJDecoder(bytes(data))
    m = pj_message(d, schema, msg)
    tok = d.read()
    if tok.kind != T_EOF:
        raise d.unexpected(tok)
    return m


def pj_message(d, schema, msg):
    """encoding/protojson/decode.go (decoder).unmarshalMessage"""
    tok = d.read()
    if tok.kind != T_OBJ_OPEN:
        raise d.unexpected(tok)
    out, seen, fields = {}, set(), schema[msg]
    while True:
        tok = d.read()
        if tok.kind == T_OBJ_CLOSE:
            return out
        if tok.kind != T_NAME:
            raise d.unexpected(tok)
        f = fields.get(tok.val)
        if f is None:
            pj_skip(d)
            continue
        if f[1] in seen:
            raise d.new_error(tok.pos, "duplicate field " + tok.raw())
        seen.add(f[1])
        nxt, _ = d.peek()
        if nxt is not None and nxt.kind == T_NULL:
            d.read()
            continue
        if f[3]:
            lt = d.read()
            if lt.kind != T_ARR_OPEN:
                raise d.unexpected(lt)
            items = []
            while True:
                nxt, err = d.peek()
                if err:
                    raise err
                if nxt.kind == T_ARR_CLOSE:
                    d.read()
                    break
                items.append(pj_message(d, schema, f[4]) if f[2] == "msg" else pj_scalar(d, f))
            out[f[0]] = items
        elif f[2] == "msg":
            out[f[0]] = pj_message(d, schema, f[4])
        else:
            out[f[0]] = pj_scalar(d, f)


def pj_scalar(d, f):
    """encoding/protojson/decode.go (decoder).unmarshalScalar"""
    tok = d.read()
    kind = f[2]
    if kind == "string" and tok.kind == T_STRING:
        return tok.val
    if kind == "bool" and tok.kind == T_BOOL:
        return tok.val
    if kind == "bytes" and tok.kind == T_STRING:
        v = go_base64(tok.val)
        if v is not None:
            return v
    if kind in ("uint32", "uint64") and tok.kind in (T_NUMBER, T_STRING):
        s = tok.val
        if tok.kind == T_STRING and (s.strip() != s or not PJ_NUMBER.fullmatch(s.encode())):
            s = None
        if s is not None:
            try:
                v = decimal.Decimal(s)
                if v == v.to_integral_value() and 0 <= v < 2 ** (32 if kind == "uint32" else 64):
                    return int(v)
            except decimal.InvalidOperation:
                pass
    raise d.new_error(tok.pos, "invalid value for %s field %s: %s" % (kind, json_name(f[0]), tok.raw()))


def pj_skip(d):
    """encoding/protojson/decode.go (decoder).skipJSONValue"""
    depth = 0
    while True:
        tok = d.read()
        if tok.kind in (T_OBJ_CLOSE, T_ARR_CLOSE):
            depth -= 1
        elif tok.kind in (T_OBJ_OPEN, T_ARR_OPEN):
            depth += 1
        elif tok.kind == T_EOF:
            raise PJError("unexpected EOF")
        if depth == 0:
            return


def go_base64(s):
    """protojson unmarshalBytes: standard or URL alphabet, padded or not
    (encoding/base64 DecodeString, which skips \\r and \\n)"""
    url = "-" in s or "_" in s
    padded = len(s) % 4 == 0
    t = s.replace("\r", "").replace("\n", "")
    alpha = "A-Za-z0-9\\-_" if url else "A-Za-z0-9+/"
    if padded:
        if len(t) % 4 or not re.fullmatch("[%s]*(?:[%s]{2}==|[%s]{3}=)?" % ((alpha,) * 3), t):
            return None
    elif len(t) % 4 == 1 or not re.fullmatch("[%s]*" % alpha, t):
        return None
    t += "=" * (-len(t) % 4)
    return base64.b64decode(t, altchars=b"-_" if url else None)


# --- encoding/json's scanner (grpc-gateway reads the body with it) ----------

def go_json_value(b):
    """json.NewDecoder(body).Decode(&json.RawMessage): the first value's
    (start, end); None when there is nothing but white space (io.EOF);
    GoError with encoding/json's message otherwise."""
    n = len(b)

    def ws(i):
        while i < n and b[i] in b" \t\r\n":
            i += 1
        return i

    def quote_char(c):
        if c == ord("'"):
            return "'\\''"
        if c == ord('"'):
            return "'\"'"
        return "'" + go_quote(chr(c))[1:-1] + "'"

    def bad(i, context):
        return GoError("invalid character %s %s" % (quote_char(b[i]), context))

    def eof(i):
        if i >= n:
            raise GoError("unexpected EOF")

    def value(i):
        i = ws(i)
        eof(i)
        c = b[i]
        if c == ord("{"):
            i = ws(i + 1)
            eof(i)
            if b[i] == ord("}"):
                return i + 1
            while True:
                if b[i] != ord('"'):
                    raise bad(i, "looking for beginning of object key string")
                i = ws(string(i + 1))
                eof(i)
                if b[i] != ord(":"):
                    raise bad(i, "after object key")
                i = ws(value(i + 1))
                eof(i)
                if b[i] == ord("}"):
                    return i + 1
                if b[i] != ord(","):
                    raise bad(i, "after object key:value pair")
                i = ws(i + 1)
                eof(i)
        if c == ord("["):
            i = ws(i + 1)
            eof(i)
            if b[i] == ord("]"):
                return i + 1
            while True:
                i = ws(value(i))
                eof(i)
                if b[i] == ord("]"):
                    return i + 1
                if b[i] != ord(","):
                    raise bad(i, "after array element")
                i += 1
        if c == ord('"'):
            return string(i + 1)
        if c == ord("-") or 0x30 <= c <= 0x39:
            if c == ord("-"):
                i += 1
                eof(i)
                if not 0x30 <= b[i] <= 0x39:
                    raise bad(i, "in numeric literal")
            if b[i] == ord("0"):
                i += 1
            else:
                while i < n and 0x30 <= b[i] <= 0x39:
                    i += 1
            if i < n and b[i] == ord("."):
                i += 1
                eof(i)
                if not 0x30 <= b[i] <= 0x39:
                    raise bad(i, "after decimal point in numeric literal")
                while i < n and 0x30 <= b[i] <= 0x39:
                    i += 1
            if i < n and b[i] in b"eE":
                i += 1
                eof(i)
                if b[i] in b"+-":
                    i += 1
                    eof(i)
                if not 0x30 <= b[i] <= 0x39:
                    raise bad(i, "in exponent of numeric literal")
                while i < n and 0x30 <= b[i] <= 0x39:
                    i += 1
            return i
        for word in (b"true", b"false", b"null"):
            if c == word[0]:
                for k in range(1, len(word)):
                    eof(i + k)
                    if b[i + k] != word[k]:
                        raise bad(i + k, "in literal %s (expecting %s)"
                                  % (word.decode(), quote_char(word[k])))
                return i + len(word)
        raise bad(i, "looking for beginning of value")

    def string(i):
        while True:
            m = PJ_STOP.search(b, i)
            if not m:
                raise GoError("unexpected EOF")
            i, c = m.start(), b[m.start()]
            if c == ord('"'):
                return i + 1
            if c < 0x20:
                raise bad(i, "in string literal")
            eof(i + 1)
            e = b[i + 1]
            if e in b'bfnrt\\/"':
                i += 2
            elif e == ord("u"):
                for k in range(2, 6):
                    eof(i + k)
                    if b[i + k] not in b"0123456789abcdefABCDEF":
                        raise bad(i + k, "in \\u hexadecimal character escape")
                i += 6
            else:
                raise bad(i + 1, "in string escape code")

    start = ws(0)
    if start == n:
        return None
    return start, value(start)


# --- the HTTP side ---------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, body=b"", ctype="text/plain", text=None, extra=()):
        if isinstance(body, str):
            body = bstr(body)
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        with self.server.lock:
            with open(os.path.join(self.server.out, "requests.jsonl"), "a") as f:
                f.write(json.dumps({"path": self.path, "status": code,
                                    "text": body.decode("utf-8", "replace") if text is None else text,
                                    "t": time.time()}) + "\n")

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            body = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return bytes(body)
                if len(body) + size > MAX_READ:
                    return None
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_READ:
            return None
        return self.rfile.read(length)

    def api_of(self):
        """The API a path reaches (after --prefix), or None."""
        path = urlsplit(self.path).path
        prefix = self.server.prefix
        if prefix:
            if not path.startswith(prefix + "/"):
                return None, path
            path = path[len(prefix):]
        return {PYROSCOPE_PATH: "pyroscope", PARCA_PATH: "parca"}.get(path), path

    def elsewhere(self, path):
        """A path neither API serves: 404, or with --ui what Parca's router
        does (pkg/server/server.go: fallbackNotFound(chi router, uiHandler)):
        whatever the router or the gateway would 404 goes to the UI's
        http.ServeMux, where index.html is registered at PREFIX + "/", a
        subtree pattern: its page (200) for any path under the prefix, /api
        included; Go's plain 404 outside it."""
        if not self.server.ui:
            return self.answer(404, "not found: " + self.path)
        if self.server.prefix and not urlsplit(self.path).path.startswith(self.server.prefix + "/"):
            return self.answer(404, "404 page not found\n", "text/plain; charset=utf-8",
                               "404 page not found", (("X-Content-Type-Options", "nosniff"),))
        return self.answer(200, UI_PAGE, "text/html; charset=utf-8", "(Parca's web UI page)")

    def do_GET(self):
        api, path = self.api_of()
        if api == "pyroscope":  # connect-go handler.go ServeHTTP: POST only
            return self.answer(405, b"", None, "405 Method Not Allowed (Allow: POST)",
                               (("Allow", "POST"),))
        if api == "parca":  # grpc-gateway: the path's other method
            return self.gateway_error(GrpcError(12, "Method Not Allowed"))
        self.elsewhere(path)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def do_POST(self):
        mode = self.server.mode
        body = self.read_body()
        if body is None:
            self.close_connection = True
            return self.answer(413, "body too large for push_receiver.py", extra=(("Connection", "close"),))
        if mode == "close":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if mode.startswith("slow:"):
            time.sleep(float(mode[5:]))
        if mode.startswith("status:"):
            return self.answer(int(mode[7:]), "failing on purpose")
        if mode == "html":
            return self.answer(200, UI_PAGE, "text/html; charset=utf-8")
        if mode == "empty":
            return self.answer(200, b"", None, "")
        if mode == "redirect":
            return self.answer(302, b"", None, "redirect to /login", (("Location", "/login"),))
        api, path = self.api_of()
        if not api:
            return self.elsewhere(path)
        if self.server.token and \
                self.headers.get("Authorization") != "Bearer " + self.server.token:
            return self.answer(401, "unauthenticated")
        if self.server.header:
            name, value = self.server.header
            if self.headers.get(name) != value:
                return self.answer(403, "missing " + name)
        if api == "pyroscope":
            self.pyroscope(body)
        else:
            self.parca(body)

    # --- Pyroscope -----------------------------------------------------------

    def connect_answer(self, err, ctype):
        """connect-go protocol_connect.go (*connectUnaryHandlerConn).Close and
        newConnectWireError: the first connect error found decides the code and
        message, else "unknown" and the whole text"""
        if err is None:
            return self.answer(200, "{}", ctype, "{}", (("Accept-Encoding", "gzip"),))
        found = next((e for e in err.walk() if e.code), None)
        code, msg = (found.code, found.message) if found else ("unknown", err.msg)
        return self.answer(CONNECT_HTTP[code], go_json({"code": code, "message": msg}),
                           "application/json", msg, (("Accept-Encoding", "gzip"),))

    def pyroscope(self, body):
        """connect-go handler.go (*Handler).ServeHTTP and protocol_connect.go
        NewConn, UnmarshalFunc, for PusherService.Push"""
        ctype = canonical_content_type(self.headers.get("Content-Type") or "")
        codec = CONNECT_CODECS.get(ctype)
        if codec is None:
            if ctype.startswith("application/grpc"):
                return self.answer(501, "connect-go's gRPC and gRPC-Web protocols: not emulated "
                                   "by push_receiver.py")
            return self.answer(415, b"", None, "415 Unsupported Media Type (Accept-Post)",
                               (("Accept-Post", ACCEPT_POST),))
        enc = self.headers.get("Content-Encoding") or ""
        if enc not in ("", "identity", "gzip"):
            return self.connect_answer(connect_error(
                "unimplemented", 'unknown compression %s: supported encodings are gzip'
                % go_quote(enc)), ctype)
        if len(body) > P_BODY_LIMIT:
            return self.connect_answer(connect_error(
                "resource_exhausted", "message size %d is larger than configured max %d"
                % (len(body), P_BODY_LIMIT)), ctype)
        if enc == "gzip" and body:
            try:
                body = go_gunzip(body, P_BODY_LIMIT)
            except GzipError as e:
                return self.connect_answer(connect_error(
                    "invalid_argument", ("get decompressor: " if e.header else "decompress: ") + e.msg),
                    ctype)
            if len(body) > P_BODY_LIMIT:
                return self.connect_answer(connect_error(
                    "resource_exhausted", "message size %d is larger than configured max %d"
                    % (len(body), P_BODY_LIMIT)), ctype)
        try:
            req = push_request(body, codec)
        except (PJError, VtError) as e:
            return self.connect_answer(connect_error("invalid_argument", "unmarshal message: %s" % e),
                                       ctype)
        # pkg/tenant/interceptor.go: multitenancy off, the tenant "anonymous"
        records, err = distributor_push(self.server, req)
        self.store(records)
        return self.connect_answer(err, ctype)

    # --- Parca ---------------------------------------------------------------

    def gateway_error(self, e):
        """grpc-gateway runtime/errors.go DefaultHTTPErrorHandler: google.rpc.Status
        by protojson (EmitUnpopulated; invalid UTF-8 shown as U+FFFD here)"""
        msg = bstr(e.msg).decode("utf-8", "replace")
        return self.answer(GRPC_HTTP.get(e.code, 500),
                           json.dumps({"code": e.code, "message": msg, "details": []},
                                      ensure_ascii=False, separators=(",", ":")),
                           "application/json", msg)

    def parca(self, body):
        """pkg/server/server.go grpcHandlerFunc, then the gateway's
        request_ProfileStoreService_WriteRaw_0 and the gRPC server"""
        ctype = self.headers.get("Content-Type") or ""
        if ctype.startswith("application/grpc"):
            if ctype.startswith("application/grpc-web"):
                return self.answer(501, "improbable-eng grpc-web: not emulated by push_receiver.py")
            # grpc-go internal/transport/handler_server.go NewServerHandlerTransport
            return self.answer(505, "gRPC requires HTTP/2\n", "text/plain; charset=utf-8",
                               "gRPC requires HTTP/2")
        try:
            span = go_json_value(body)
            req = {} if span is None else protojson_unmarshal(body[span[0]:span[1]], PARCA_JSON,
                                                               "WriteRawRequest")
        except (GoError, PJError) as e:
            return self.gateway_error(GrpcError(3, str(e)))
        size = write_raw_request_size(req)
        if size > PARCA_MAX_MSG:  # grpc-go rpc_util.go recvAndDecompress
            return self.gateway_error(GrpcError(8, "grpc: received message larger than max (%d vs. %d)"
                                                % (size, PARCA_MAX_MSG)))
        try:
            records = write_raw(req)
        except GrpcError as e:
            return self.gateway_error(e)
        except GoError as e:  # a plain error from the handler: codes.Unknown
            return self.gateway_error(GrpcError(2, e.msg))
        except GoPanic as e:
            return self.gateway_error(GrpcError(13, "panic: %s (Parca's process would crash here: "
                                                "no answer, the connection dropped)" % e))
        self.store(records)
        return self.answer(200, "{}", "application/json", "{}")

    # --- what is stored ------------------------------------------------------

    def store(self, records):
        with self.server.lock:
            for raw, rec in records:
                self.server.n += 1
                rec = dict(n=self.server.n, **rec, t=time.time())
                with open(os.path.join(self.server.out, "%d.pb.gz" % rec["n"]), "wb") as f:
                    f.write(raw)
                with open(os.path.join(self.server.out, "index.jsonl"), "a") as f:
                    f.write(json.dumps(rec) + "\n")


def canonical_content_type(ct):
    """connect-go protocol.go canonicalizeContentType (mime.ParseMediaType,
    FormatMediaType, charset lowercased)"""
    if re.fullmatch(r"[a-z.+\-]*/[a-z.+\-]*", ct):
        return ct
    parts = ct.split(";")
    base = parts[0].strip().lower()
    if not re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9a-z]+/[!#$%&'*+\-.^_`|~0-9a-z]+", base):
        return ct
    params = {}
    for p in parts[1:]:
        p = p.strip()
        if not p:
            continue
        if "=" not in p:
            return ct
        k, v = p.split("=", 1)
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] == '"':
            v = v[1:-1]
        params[k.strip().lower()] = v.lower() if k.strip().lower() == "charset" else v
    return "; ".join([base] + ["%s=%s" % (k, params[k]) for k in sorted(params)])


# === Pyroscope ===============================================================

def push_request(body, codec):
    """connect-go codec.go protoJSONCodec.Unmarshal (or the vtproto codec):
    -> [{"labels": [(name, value)], "samples": [(raw bytes, ID)]}]"""
    if codec == "json":
        if not body:
            raise PJError("zero-length payload is not a valid JSON object")
        try:
            m = protojson_unmarshal(body, PUSH_JSON, "PushRequest")
        except PJError as e:
            raise PJError("unmarshal into *pushv1.PushRequest: %s" % e)
        return [{"labels": [(l.get("name", ""), l.get("value", "")) for l in s.get("labels", [])],
                 "samples": [(x.get("raw_profile", b""), x.get("ID", "")) for x in s.get("samples", [])]}
                for s in m.get("series", [])]
    m = vt_unmarshal(memoryview(body), PUSH_WIRE, "PushRequest")

    def s(m, k):  # a singular field: the last one sent wins
        return m.get(k, [b""])[-1]
    return [{"labels": [(s(l, "Name").decode("utf-8", "surrogateescape"),
                         s(l, "Value").decode("utf-8", "surrogateescape")) for l in x.get("Labels", [])],
             "samples": [(s(r, "RawProfile"), s(r, "ID").decode("utf-8", "surrogateescape"))
                         for r in x.get("Samples", [])]}
            for x in m.get("Series", [])]


def server_now_ms(srv):
    """model.Now() on the server's clock: the host's plus --clock-offset"""
    return int((time.time() + srv.clock_offset) * 1000)


def distributor_push(srv, series):
    """pkg/distributor/distributor.go (*Distributor).Push: -> (records, error)"""
    errors, batch, used, records = [], [], 0, []
    for s in series:
        for raw, sid in s["samples"]:
            try:
                data = raw_from_bytes_with_limit(raw)
                p, strings = decode_pprof(data)
            except GoError as e:
                errors.append(e)
                continue
            except VtError as e:
                errors.append(GoError(str(e)))
                continue
            used += len(data)
            if used > P_BODY_LIMIT:
                return [], push_error([validation_error(
                    "body_size_limit", "uncompressed batched profile payload size exceeds limit of %s"
                    % go_humanize(P_BODY_LIMIT, True))])
            batch.append({"labels": list(s["labels"]), "profile": Prof(p, strings, len(data)),
                          "raw": raw, "id": sid})
    if not batch and errors:
        return [], push_error(errors)
    errors += push_batch(srv, batch, records)   # dskit multierror Add flattens
    return records, push_error(errors)


def push_error(errors):
    """Push's deferred block: a validation error not otherwise coded becomes invalid_argument"""
    if not errors:
        return None
    err = multi_error(errors)
    coded = any(e.code and e.code != "unknown" for e in err.walk())
    if not coded and any(e.reason for e in err.walk()):
        err = connect_error("invalid_argument", err)
    return err


def raw_from_bytes_with_limit(raw):
    """pkg/pprof/pprof.go RawFromBytesWithLimit: gzip optional, 4 MiB uncompressed"""
    try:
        data = go_gunzip(raw, P_MAX_PROFILE_BYTES)
    except GzipError as e:
        if e.header and e.msg == "gzip: invalid header":
            data = bytes(raw)           # gzip.ErrHeader: not gzipped
        elif e.header:
            raise GoError("gzip reset: " + e.msg)
        else:
            raise GoError("copy to buffer: " + e.msg)
    if len(data) > P_MAX_PROFILE_BYTES:
        raise validation_error("profile_size_limit", "uncompressed profile payload size exceeds "
                               "limit of %s" % go_humanize(P_MAX_PROFILE_BYTES, True))
    return data


def push_batch(srv, batch, records):
    """(*Distributor).PushBatch: each series on its own; -> their errors, wrapped"""
    if not batch:
        return [connect_error("invalid_argument", "no profiles received")]
    errs = []
    for index, s in enumerate(batch):
        try:
            with srv.lock:
                rec = push_series(srv, s)
            if rec:
                records.append((bytes(s["raw"]), rec))
        except GoError as e:
            errs.append(GoError("push series with index %d and id %s failed: %s" % (index, s["id"], e.msg),
                                wrapped=[e]))
        except GoPanic as e:  # util.RecoverPanic
            errs.append(GoError("push series with index %d and id %s failed: %s" % (index, s["id"], e)))
    return errs


def labels_get(ls, name):
    """phlaremodel.Labels.Get: the first"""
    return next((v for n, v in ls if n == name), "")


def label_pairs_string(ls):
    """pkg/model/labels.go LabelPairsString"""
    return "{" + ", ".join("%s=%s" % (n, go_quote(v)) for n, v in ls) + "}"


def push_series(srv, s):
    """(*Distributor).pushSeries: -> the index record, or None"""
    p, now = s["profile"], server_now_ms(srv)
    labels = list(s["labels"])
    if labels_get(labels, "service_name") == "":
        labels.append(("service_name", "unknown_service"))
    labels.sort(key=lambda l: bstr(l[0]))
    rate_limit(srv, sum(len(bstr(n)) + len(bstr(v)) for n, v in labels) + p.raw_size)
    try:
        validate_profile(p, labels, now)
    except GoError as e:
        raise connect_error("invalid_argument", e)
    # pprof.FixGoProfile (Go profiles only) and sampletype.Relabel (no rules): not emulated
    stats = normalize(p)
    rec = {"api": "pyroscope", "sent_labels": dict(s["labels"]), "time_nanos": p.time_nanos,
           "duration_nanos": p.duration_nanos,
           "period_type": [p.s(p.period_type[0]), p.s(p.period_type[1])] if p.period_type else ["", ""],
           "sent_totals": p.sent_totals, "dropped_samples": stats["dropped"],
           "merged_samples": stats["merged"]}
    if not p.sample:
        # "Normalization may cause all profiles and series to be empty": 200, nothing
        rec.update(labels={n: v for n, v in labels if n not in ("__delta__", "__session_id__")},
                   label_sets=[], series=[], stored={},
                   totals={p.s(t): 0 for t, _ in p.sample_type})
        return rec
    labels = [l for l in labels if l[0] != "__session_id__"]  # limitMaxSessionsPerSeries(0)
    groups = visit_sample_series(srv, p, labels)
    (head_ingest_v1 if srv.version == 1 else head_ingest_v2)(srv, p, groups, rec)
    return rec


class RateLimiter:
    """golang.org/x/time/rate Limiter.AllowN (dskit's per-tenant limiter)"""

    def __init__(self, rate, burst):
        self.rate, self.burst, self.tokens, self.last = rate, burst, float(burst), None

    def allow_n(self, now, n):
        tokens = self.tokens if self.last is None else \
            min(self.burst, self.tokens + max(0.0, now - self.last) * self.rate)
        if n > self.burst or tokens < n:
            return False
        self.tokens, self.last = tokens - n, now
        return True


def rate_limit(srv, size):
    """(*Distributor).rateLimit"""
    if not srv.limiter.allow_n(time.monotonic(), size):
        raise connect_error("resource_exhausted", "push rate limit (%s) exceeded while adding %s"
                            % (go_humanize(P_RATE, False), go_humanize(size, False)))


def validate_profile(p, ls, now):
    """pkg/validation/validate.go ValidateProfile"""
    lps = label_pairs_string(ls)
    if not p.sample_type:
        raise validation_error("malformed_profile", "empty profile")
    if p.time_nanos > 0:
        t = p.time_nanos // 1000000
        lo, hi = now - P_OLDER_MS, now + P_NEWER_MS   # newIngestionWindow
        if not (t > lo and t < hi):
            raise validation_error("not_in_ingestion_window", "profile with labels '%s' is outside of "
                                   "ingestion window (profile timestamp: %s, the ingestion window "
                                   "starts at %s and ends at %s)" % (lps, go_time_millis(t),
                                                                     go_time_millis(lo), go_time_millis(hi)))
    else:
        p.time_nanos = now * 1000000
    if p.raw_size > P_MAX_PROFILE_BYTES:  # SizeVT(): the bytes received, uncompressed
        raise validation_error("profile_size_limit", "the profile with labels '%s' exceeds the size "
                               "limit (max_profile_size_byte, actual: %d, limit: %d)"
                               % (lps, p.raw_size, P_MAX_PROFILE_BYTES))
    if len(p.sample) > P_MAX_SAMPLES:
        raise validation_error("samples_limit", "the profile with labels '%s' exceeds the samples count "
                               "limit (max_profile_stacktrace_samples, actual: %d, limit: %d)"
                               % (lps, len(p.sample), P_MAX_SAMPLES))
    for s in p.sample:
        if len(s["loc"]) > P_MAX_DEPTH:
            s["loc"] = s["loc"][len(s["loc"]) - P_MAX_DEPTH:]
        if len(s["label"]) > P_MAX_SAMPLE_LABELS:
            raise validation_error("sample_labels_limit", "the profile with labels '%s' exceeds the "
                                   "sample labels limit (max_profile_stacktrace_sample_labels, actual: "
                                   "%d, limit: %d)" % (lps, len(s["label"]), P_MAX_SAMPLE_LABELS))
    for i, b in enumerate(p.st_raw):
        if len(b) > P_MAX_SYMBOL:
            p.st_raw[i] = b[len(b) - P_MAX_SYMBOL:]
            p.st[i] = p.st_raw[i].decode("utf-8", "surrogateescape")
    if any(l["id"] == 0 for l in p.location):
        raise validation_error("malformed_profile", "location id is 0")
    if any(f["id"] == 0 for f in p.function):
        raise validation_error("malformed_profile", "function id is 0")
    if any(len(s["val"]) != len(p.sample_type) for s in p.sample):
        raise validation_error("malformed_profile", "sample value length mismatch")
    validate_string_table_access(p)
    for t, _ in p.sample_type:
        if "-" in go_index(p.st, t):
            raise validation_error("malformed_profile", "sample type contains -")
    for b in p.st_raw:
        if not utf8_valid(b.decode("utf-8", "surrogateescape")):
            raise validation_error("malformed_profile", "invalid utf8 string hex: " + b.hex())


def validate_string_table_access(p):
    """pkg/validation/validate.go validateStringTableAccess"""
    n = len(p.st)

    def bad(msg):
        return validation_error("malformed_profile", msg)
    if n == 0 or p.st[0] != "":
        raise bad("string 0 should be empty string")
    if any(t >= n for t, _ in p.sample_type):
        raise bad("sample type type string index out of range")
    for s in p.sample:
        if any(l[1] >= n or l[0] >= n for l in s["label"]):
            raise bad("sample label string index out of range")
    for f in p.function:
        for k, what in (("name", "function name string index out of range"),
                        ("system_name", "function system name index string out of range"),
                        ("filename", "function file name string index out of range")):
            if f[k] >= n:
                raise bad(what)
    for m in p.mapping:
        if m["filename"] >= n:
            raise bad("mapping file name string index out of range")
        if m["build_id"] >= n:
            raise bad("mapping build id string index out of range")


def normalize(p):
    """pkg/pprof/pprof.go (*Profile).Normalize: -> {"dropped", "merged"}"""
    dropped = merged = 0
    for s in p.sample:  # non-string labels are not supported
        s["label"] = [l for l in s["label"] if l[1] != 0]
    kept = []
    for s in p.sample:
        if any(v < 0 for v in s["val"]) or not any(v > 0 for v in s["val"]):
            dropped += 1
        else:
            kept.append(s)
    by = {}
    for s in kept:  # duplicates (same locations, same labels) merged
        k = (tuple(s["loc"]), tuple(sorted((l[0], l[1]) for l in s["label"])))
        if k in by:
            by[k]["val"] = [a + b for a, b in zip(by[k]["val"], s["val"])]
            merged += 1
        else:
            by[k] = s
    p.sample = list(by.values())
    dropped += sanitize_profile(p)
    for l in p.location:  # clearAddresses
        if p.mapping[l["mapping_id"] - 1]["has_functions"]:
            l["address"] = 0
    for m in p.mapping:
        if m["has_functions"]:
            m["memory_start"] = m["memory_limit"] = m["file_offset"] = 0
    return {"dropped": dropped, "merged": merged}


def sanitize_profile(p):
    """pkg/pprof/pprof.go sanitizeProfile: -> samples dropped"""
    ms = len(p.st)    # "" is at 0 (ValidateProfile checked)

    def st(i):
        return 0 if i == 0 or i >= ms or i < 0 else i
    for t in p.sample_type:
        t[0], t[1] = st(t[0]), st(t[1])
    if p.period_type:
        p.period_type = [st(p.period_type[0]), st(p.period_type[1])]
    t = {}
    for j, m in enumerate(p.mapping, 1):
        m["build_id"], m["filename"] = st(m["build_id"]), st(m["filename"])
        t[m["id"]] = j
        m["id"] = j
    stub, locs = None, []
    for l in p.location:
        if not l["line"] and l["address"] == 0:
            continue            # locationEmpty
        if l["mapping_id"] == 0:
            if stub is None:
                stub = {"id": len(p.mapping) + 1, "memory_start": 0, "memory_limit": 0,
                        "file_offset": 0, "filename": 0, "build_id": 0, "has_functions": 0}
                p.mapping.append(stub)
            l["mapping_id"] = stub["id"]
        else:
            l["mapping_id"] = t.get(l["mapping_id"], 0)
            if l["mapping_id"] == 0:
                continue        # locationMappingInvalid
        locs.append(l)
    t = {}
    for j, f in enumerate(p.function, 1):
        f["name"], f["system_name"], f["filename"] = st(f["name"]), st(f["system_name"]), st(f["filename"])
        t[f["id"]] = j
        f["id"] = j
    p.location = []
    for l in locs:
        for line in l["line"]:
            line[0] = t.get(line[0], 0)
        if all(line[0] for line in l["line"]):
            p.location.append(l)    # else locationFunctionInvalid
    t = {}
    for j, l in enumerate(p.location, 1):
        t[l["id"]] = j
        l["id"] = j
    samples, dropped = [], 0
    for s in p.sample:
        s["loc"] = [t.get(i, 0) for i in s["loc"]]
        if len(s["val"]) != len(p.sample_type) or not all(s["loc"]):
            dropped += 1
            continue
        for l in s["label"]:
            l[0], l[1], l[3] = st(l[0]), st(l[1]), st(l[3])
        samples.append(s)
    p.sample = samples
    return dropped


def stack_keys(p, samples):
    """The stacks as the symbol database keys them: their frames' contents"""
    locs = []
    for l in p.location:
        m = p.mapping[l["mapping_id"] - 1]
        lines = tuple((tuple(p.st[f[k]] for k in ("name", "system_name", "filename")) + (f["start_line"],),
                       line) for fid, line in l["line"] for f in [p.function[fid - 1]])
        locs.append((p.st[m["filename"]], p.st[m["build_id"]], m["memory_start"], m["memory_limit"],
                     m["file_offset"], l["address"], lines))
    return [tuple(locs[i - 1] for i in s["loc"]) for s in samples]


class LabelsBuilder:
    """pkg/model/labels.go LabelsBuilder"""

    def __init__(self, base):
        self.base, self.dele, self.add = list(base), [n for n, v in base if v == ""], []

    def get(self, n):
        for a in self.add:
            if a[0] == n:
                return a[1]
        return "" if n in self.dele else labels_get(self.base, n)

    def set(self, n, v):
        if v == "":
            return self.delete(n)
        for a in self.add:
            if a[0] == n:
                a[1] = v
                return
        self.add.append([n, v])

    def delete(self, n):
        self.add = [a for a in self.add if a[0] != n]
        self.dele.append(n)

    def labels(self):
        addn = {a[0] for a in self.add}
        out = [(n, v) for n, v in self.base if n not in self.dele and n not in addn]
        out += [(a[0], a[1]) for a in self.add]
        return sorted(out, key=lambda l: bstr(l[0]))


# pkg/validation/relabeling.go defaultRelabelRules (position "first", no user rules)
DEFAULT_RELABEL = [(("__name__",), ";", "godeltaprof_(.*)", "__name_replaced__", r"\g<0>"),
                   (("__name_replaced__",), ";", "godeltaprof_(.*)", "__delta__", "false"),
                   (("__name__",), ";", "godeltaprof_(.*)", "__name__", r"\g<1>"),
                   (("__name__", "__type__"), "/", "wall/cpu", "__name_replaced__", "wall"),
                   (("__name__", "__type__"), "/", "wall/cpu", "__name__", "process_cpu")]


def relabel_process(b):
    """prometheus model/relabel ProcessBuilder, action replace, over the default rules"""
    for src, sep, rx, target, repl in DEFAULT_RELABEL:
        m = re.fullmatch(rx, sep.join(b.get(n) for n in src), re.S)
        if not m:
            continue
        res = m.expand(repl)
        if res == "":
            b.delete(target)
        else:
            b.set(target, res)


def visit_sample_series(srv, p, labels):
    """pkg/model/pprofsplit/pprof_split.go VisitSampleSeries, each label set
    through ValidateLabels: -> [(labels, samples)]"""
    def key_name(k):
        n = p.st[k]
        return "span_id" if n == "profile_id" else n   # RenameLabel(profile_id, span_id)
    raw_groups = {}
    for s in p.sample:
        k = tuple(sorted((l[0], l[1]) for l in s["label"] if key_name(l[0]) != "span_id"))
        raw_groups.setdefault(k, []).append(s)
    if len(raw_groups) == 1 and () in raw_groups:
        b = LabelsBuilder(labels)
        relabel_process(b)
        return [(validate_labels(b.labels(), srv.version), p.sample)]
    kept = {}
    for k, samples in raw_groups.items():
        b = LabelsBuilder(labels)
        for key, sv in k:   # addSampleLabelsToLabelsBuilder: the series' labels win
            if sv > 0 and b.get(key_name(key)) == "":
                b.set(key_name(key), p.st[sv])
        relabel_process(b)
        kept.setdefault(tuple(b.labels()), []).extend(samples)
    return [(validate_labels(list(ls), srv.version), samples) for ls, samples in kept.items() if samples]


def sanitize_legacy_label_name(ln):
    """pkg/validation/validate.go SanitizeLegacyLabelName"""
    if ln == "":
        return ln, ln, False
    dots = False
    for i, c in enumerate(ln):
        if not ("a" <= c <= "z" or "A" <= c <= "Z" or c == "_" or ("0" <= c <= "9" and i != 0)):
            if c == ".":
                dots = True
            else:
                return ln, ln, False
    return (ln, ln.replace(".", "_"), True) if dots else (ln, ln, True)


def handle_sanitized_label(ls, orig_idx, orig, new):
    """pkg/validation/validate.go handleSanitizedLabel"""
    value = ls[orig_idx][1]
    rest = ls[:orig_idx] + ls[orig_idx + 1:]
    names = [bstr(n) for n, _ in rest]
    at = bisect.bisect_left(names, bstr(new))
    if at < len(rest) and rest[at][0] == new:
        if rest[at][1] == value:
            return rest, orig_idx
        raise validation_error("duplicate_label_names", "profile with labels '%s' has duplicate label "
                               "name '%s' after label name sanitization from '%s'"
                               % (label_pairs_string(ls), new, orig))
    rest.insert(at, (new, value))
    return rest, (orig_idx if at >= orig_idx else at)


def validate_labels(ls, version):
    """pkg/validation/validate.go ValidateLabels (sanitization on in v1.x, off in v2)"""
    try:
        if not ls:
            raise validation_error("missing_labels", "error at least one label pair is required per profile")
        ls = sorted(ls, key=lambda l: bstr(l[0]))
        if len(ls) > P_MAX_LABELS:
            raise validation_error("max_label_names_per_series", "profile series '%s' has %d label names; "
                                   "limit %d" % (label_pairs_string(ls), len(ls), P_MAX_LABELS))
        metric = labels_get(ls, "__name__")
        if metric == "" or not utf8_valid(metric):
            raise validation_error("invalid_labels", "invalid labels '%s' with error: invalid metric name"
                                   % label_pairs_string(ls))
        if labels_get(ls, "service_name") == "":
            raise validation_error("missing_labels", "invalid labels '%s' with error: service name is "
                                   "not provided" % label_pairs_string(ls))
        last, idx = "", 0
        while idx < len(ls):
            name, value = ls[idx]
            if len(bstr(name)) > P_MAX_NAME:
                raise validation_error("label_name_too_long", "profile with labels '%s' has label name "
                                       "too long: '%s'" % (label_pairs_string(ls), name))
            if len(bstr(value)) > P_MAX_VALUE:
                raise validation_error("label_value_too_long", "profile with labels '%s' has label value "
                                       "too long: '%s'" % (label_pairs_string(ls), value))
            if version != 1:
                if name == "" or not utf8_valid(name):
                    raise validation_error("invalid_labels", "invalid labels '%s' with error: invalid "
                                           "label name '%s'" % (label_pairs_string(ls), name))
            else:
                orig, new, ok = sanitize_legacy_label_name(name)
                if ok and orig != new:
                    ls, idx = handle_sanitized_label(ls, idx, orig, new)
                    last = ls[idx - 1][0] if 0 < idx <= len(ls) else ""
                    continue
                if not ok:
                    raise validation_error("invalid_labels", "invalid labels '%s' with error: invalid "
                                           "label name '%s'" % (label_pairs_string(ls), orig))
            if not utf8_valid(value):
                raise validation_error("invalid_labels", "invalid labels '%s' with error: invalid label "
                                       "value '%s'" % (label_pairs_string(ls), value))
            if last == name:
                raise validation_error("duplicate_label_names", "profile with labels '%s' has duplicate "
                                       "label name: '%s'" % (label_pairs_string(ls), name))
            last, idx = name, idx + 1
        return ls
    except GoError as e:    # visitSampleSeries
        raise connect_error("invalid_argument", e)


def profile_types(p, metric):
    """pkg/phlaredb/labels/labels.go CreateProfileLabels: __profile_type__ per sample type"""
    pt, pu = (p.st[p.period_type[0]], p.st[p.period_type[1]]) if p.period_type else ("", "")
    return [(p.st[t], "%s:%s:%s:%s:%s" % (metric, p.st[t], p.st[u], pt, pu)) for t, u in p.sample_type]


def head_ingest_v1(srv, p, groups, rec):
    """pkg/phlaredb/head.go (*Head).Ingest and delta.go computeDelta (the ingester path of v1.x)"""
    totals = {p.st[t]: 0 for t, _ in p.sample_type}
    stored, sets = {}, []
    for ls, samples in groups:
        delta = labels_get(ls, "__delta__") != "false"
        ext = [l for l in ls if l[0] not in ("__delta__", "__otel__", "__order__")]
        sets.append(dict(ext))
        metric = labels_get(ext, "__name__")
        keys = stack_keys(p, samples)
        for pos, (typ, ptype) in enumerate(profile_types(p, metric)):
            values = [[k, s["val"][pos]] for k, s in zip(keys, samples)]
            if delta and metric == "memory" and typ in ("alloc_objects", "alloc_space"):
                kept = compute_delta(srv.deltas, (tuple(ext), ptype), values)
            else:
                kept = [v for v in values if v[1] > 0]      # Samples.Compact
            stored[ptype] = stored.get(ptype, False) or bool(kept)
            totals[typ] += sum(v for _, v in kept)
    rec.update(labels=common_labels(sets), label_sets=sets, series=list(stored), stored=stored,
               totals=totals)


def compute_delta(state, fp, values):
    """pkg/phlaredb/delta.go (*deltaProfiles).computeDelta and deltaSamples"""
    last = state.get(fp)
    if last is None:    # the first push of the series: its baseline, nothing stored
        state[fp] = sample_dict(values)
        return []
    if not last:
        return [v for v in values if v[1] > 0]
    for v in values:
        new = v[1]
        if v[0] in last:
            if last[v[0]] <= new:
                v[1] = new - last[v[0]]
                last[v[0]] = new
            else:       # a reset: a new baseline (from the values as far as changed), nothing stored
                state[fp] = sample_dict(values)
                return []
        else:
            last[v[0]] = new
    return [v for v in values if v[1] > 0]


def sample_dict(values):
    d = {}
    for k, v in values:
        d[k] = d.get(k, 0) + v
    return d


def head_ingest_v2(srv, p, groups, rec):
    """pkg/segmentwriter/memdb/head.go (*Head).Ingest: "Delta not supported" """
    totals = {p.st[t]: 0 for t, _ in p.sample_type}
    stored, sets = {}, []
    for ls, samples in groups:
        ext = [l for l in ls if l[0] != "__delta__"]
        sets.append(dict(ext))
        for pos, (typ, ptype) in enumerate(profile_types(p, labels_get(ext, "__name__"))):
            kept = [s["val"][pos] for s in samples if s["val"][pos] > 0]
            stored[ptype] = stored.get(ptype, False) or bool(kept)
            totals[typ] += sum(kept)
    rec.update(labels=common_labels(sets), label_sets=sets, series=list(stored), stored=stored,
               totals=totals)


def common_labels(sets):
    out = dict(sets[0]) if sets else {}
    for s in sets[1:]:
        out = {k: v for k, v in out.items() if s.get(k) == v}
    return out


# === Parca ===================================================================

def varint_size(n):
    return len(pb_varint(n))


def write_raw_request_size(req):
    """The WriteRawRequest's protobuf size: what the gateway sends its gRPC server"""
    def field(n):
        return 1 + varint_size(n) + n

    def string(s):
        return field(len(bstr(s))) if s else 0
    size = string(req.get("tenant", "")) + (2 if req.get("normalized") else 0)
    for s in req.get("series", []):
        n = 0
        if s.get("labels") is not None:
            n += field(sum(field(string(l.get("name", "")) + string(l.get("value", "")))
                           for l in s["labels"].get("labels", [])))
        for smp in s.get("samples", []):
            m = field(len(smp["raw_profile"])) if smp.get("raw_profile") else 0
            for ei in smp.get("executable_info", []):
                e = 1 + varint_size(ei["elf_type"]) if ei.get("elf_type") else 0
                if ei.get("load_segment") is not None:
                    ls = ei["load_segment"]
                    e += field(sum(1 + varint_size(ls[k]) for k in ("offset", "vaddr") if ls.get(k)))
                m += field(e)
            n += field(m)
        size += field(n)
    return size


def write_raw(req):
    """pkg/profilestore/profilecolumnstore.go (*ProfileColumnStore).WriteRaw,
    writeSeries: -> records; all or nothing"""
    series = normalize_write_raw_request(req)
    row, records = 0, []
    for ls, name, samples in series:
        for raw, p, profiles, dropped in samples:
            names = []
            for meta, rows in profiles:     # getProfileTypeString, then the PromQL check a row
                ptype = "%s:%s:%s:%s:%s" % (name, meta["type"], meta["unit"], meta["pt"], meta["pu"])
                if p.duration_nanos != 0:
                    ptype += ":delta"
                bad = promql_metric_name_error(ptype) if rows else None
                if bad:
                    raise GoError("invalid profile type at row %d (%s): %s" % (row, ptype, bad))
                row += len(rows)
                names.append(ptype)
            records.append((raw, {
                "api": "parca", "name": name, "labels": dict(sorted(ls.items())),
                "sent_labels": dict(sorted(ls.items()), __name__=name),
                "time_nanos": p.time_nanos, "duration_nanos": p.duration_nanos,
                "period_type": [p.s(p.period_type[0]), p.s(p.period_type[1])] if p.period_type else ["", ""],
                "sent_totals": p.sent_totals,
                "totals": {meta["type"]: sum(v for _, v in rows) for meta, rows in profiles},
                "series": names,
                "stored": {n: bool(rows) for n, (meta, rows) in zip(names, profiles)},
                "dropped_samples": dropped, "merged_samples": 0}))
    return records


def promql_metric_name_error(name):
    """What prometheus/promql/parser ParseMetricSelector says of NAME{}: a
    metric name is [A-Za-z_:][A-Za-z0-9_:]* (the parser's own wording is not
    reproduced: this names the first character it would stop at)"""
    for i, c in enumerate(name):
        if not (c.isascii() and (c.isalpha() or c in "_:" or (c.isdigit() and i > 0))):
            return "1:%d: parse error: unexpected character %s in the metric name" % (i + 1, go_quote(c, "'"))
    return None


def normalize_write_raw_request(req):
    """pkg/normalizer/normalizer.go NormalizeWriteRawRequest"""
    out = []
    for rs in req.get("series", []):
        if rs.get("labels") is None:
            raise GoPanic("runtime error: invalid memory address or nil pointer dereference")
        ls, name = {}, ""
        for l in rs["labels"].get("labels", []):
            n, v = l.get("name", ""), l.get("value", "")
            if n == "__name__":
                name = v
                continue
            if n == "" or not utf8_valid(n):  # model.LabelName.IsValid, UTF8Validation
                raise GrpcError(3, "invalid label name: " + n)
            if n in ls:
                raise GrpcError(3, "duplicate label name: " + n)
            ls[n] = v
        if name == "":
            raise GrpcError(3, "missing __name__ label")
        samples = []
        for smp in rs.get("samples", []):
            raw = data = smp.get("raw_profile", b"")
            if len(data) >= 2 and data[:2] == b"\x1f\x8b":
                try:
                    data = go_gunzip(data)
                except GzipError as e:
                    raise GoError("decompressing profile: " + e.msg)
            try:
                p, strings = decode_pprof(data)
            except VtError as e:
                raise GrpcError(3, "failed to parse profile: %s" % e)
            p = Prof(p, strings, len(data))
            try:
                validate_pprof_profile(p, smp.get("executable_info", []))
            except GoError as e:
                raise GrpcError(3, "invalid profile: " + e.msg)
            label_names_from_samples(p)
            profiles, dropped = normalize_pprof(p)
            samples.append((bytes(raw), p, profiles, dropped))
        out.append((ls, name, samples))
    return out


def validate_pprof_profile(p, ei):
    """pkg/normalizer/validate.go ValidatePprofProfile (HEAD: >= for string indices)"""
    n = len(p.st)
    if n > 0 and p.st[0] != "":
        raise GoError("first item in string table is expected to be empty string, but it is %s"
                      % go_quote(p.st_raw[0]))
    for i, m in enumerate(p.mapping):
        if m["id"] != i + 1:
            raise GoError("mapping id is not sequential")
        if m["filename"] != 0 and m["filename"] >= n:
            raise GoError("mapping (id: %d) has invalid filename index %d" % (m["id"], m["filename"]))
        if m["build_id"] != 0 and m["build_id"] >= n:   # (it prints the filename index)
            raise GoError("mapping (id: %d) has invalid buildid index %d" % (m["id"], m["filename"]))
    if ei and len(ei) != len(p.mapping):
        raise GoError("profile has %d mappings but %d executable infos" % (len(p.mapping), len(ei)))
    for i, f in enumerate(p.function):
        if f["id"] != i + 1:
            raise GoError("function id is not sequential")
        for k, what in (("name", "name"), ("system_name", "systemname"), ("filename", "filename")):
            if f[k] != 0 and f[k] >= n:
                raise GoError("function (id: %d) has invalid %s index %d" % (f["id"], what, f[k]))
    for i, l in enumerate(p.location):
        if l["id"] != i + 1:
            raise GoError("location id is not sequential")
        if l["mapping_id"] != 0 and l["mapping_id"] > len(p.mapping):
            raise GoError("location has invalid mapping id: %d" % l["mapping_id"])
        for fid, _ in l["line"]:
            if fid != 0 and fid > len(p.function):
                raise GoError("location %d has invalid function id: %d" % (l["id"], fid))
    if not p.sample_type and p.sample:
        raise GoError("missing sample type information")
    for i, (t, u) in enumerate(p.sample_type):
        if t != 0 and t >= n:
            raise GoError("sample type %d has invalid type index %d" % (i, t))
        if u != 0 and u >= n:
            raise GoError("sample type %d has invalid unit index %d" % (i, u))
    if p.period_type:
        if p.period_type[0] != 0 and p.period_type[0] >= n:
            raise GoError("period type has invalid type index %d" % p.period_type[0])
        if p.period_type[1] != 0 and p.period_type[1] >= n:
            raise GoError("period type has invalid unit index %d" % p.period_type[1])
    for i, s in enumerate(p.sample):
        if len(s["val"]) != len(p.sample_type):
            raise GoError("mismatch: sample has %d values vs. %d types" % (len(s["val"]), len(p.sample_type)))
        for j, l in enumerate(s["loc"]):
            if l == 0:
                raise GoError("location ids of stacktraces must be non-zero")
            if l > len(p.location):
                raise GoError("sample %d location number %d (%d) is out of range" % (i, j, l))
        for j, l in enumerate(s["label"]):
            if l[0] == 0:
                raise GoError("sample %d label %d has no key" % (i, j))
            if l[0] >= n:
                raise GoError("sample %d label %d has invalid key index %d" % (i, j, l[0]))
            if l[1] != 0 and l[1] >= n:
                raise GoError("sample %d label %d has invalid str index %d" % (i, j, l[1]))


def label_names_from_samples(p):
    """pkg/normalizer/normalizer.go LabelNamesFromSamples: the string
    labels' names (their columns' values are never stored)"""
    for s in p.sample:
        for key, sv, num, _ in s["label"]:
            if sv != 0:
                go_index(p.st, key)


def normalize_pprof(p):
    """pkg/normalizer/normalizer.go NormalizePprof and MetaFromPprof: per
    sample type (meta, [(stack, value)]), zero values dropped -> (profiles,
    samples without any row)"""
    profiles = []
    for t, u in p.sample_type:
        pt = (go_index(p.st, p.period_type[0]), go_index(p.st, p.period_type[1])) if p.period_type \
            else ("", "")
        profiles.append(({"type": go_index(p.st, t), "unit": go_index(p.st, u), "pt": pt[0], "pu": pt[1]},
                         []))
    dropped, locs = 0, {}
    for s in p.sample:
        for key, sv, num, _ in s["label"]:  # LabelsFromSample: string labels, then all keys
            if sv != 0:
                go_index(p.st, key)
                go_index(p.st, sv)
        for key, sv, num, _ in s["label"]:
            go_index(p.st, key)
        if not any(s["val"]):
            dropped += 1
            continue
        stack = tuple(serialize_location(p, i, locs) for i in s["loc"])
        for j, v in enumerate(s["val"]):
            if v != 0:
                profiles[j][1].append((stack, v))
    return profiles, dropped


def serialize_location(p, i, cache):
    """pkg/normalizer/normalizer.go serializePprofStacktrace, profile/encode.go
    EncodePprofLocation: one frame (its panics included)"""
    if i in cache:
        return cache[i]
    l = p.location[i - 1]
    m = p.mapping[l["mapping_id"] - 1] if l["mapping_id"] else None
    ms = None if m is None else tuple(go_index(p.st, m[k]) if m[k] else "" for k in ("build_id", "filename")) + \
        (m["memory_start"], m["memory_limit"] - m["memory_start"], m["file_offset"])
    lines = []
    for fid, line in l["line"]:
        f = p.function[fid - 1] if fid else None
        lines.append((line, None if f is None else (f["start_line"],) + tuple(
            go_index(p.st, f[k]) if f[k] else "" for k in ("name", "system_name", "filename"))))
    cache[i] = (l["address"], ms, tuple(lines))
    return cache[i]


# === the server ===============================================================

def main():
    ap = argparse.ArgumentParser(description="Pyroscope's and Parca's push APIs, for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--token")
    ap.add_argument("--require-header")
    ap.add_argument("--clock-offset", type=float, default=0.0,
                    help="seconds the servers' clock is ahead of the host's (may be negative)")
    ap.add_argument("--prefix", default="", help="serve the APIs under this path, e.g. /pyro")
    ap.add_argument("--ui", action="store_true",
                    help="answer other paths as Parca's web UI does (200, HTML)")
    ap.add_argument("--pyroscope-version", type=int, choices=(1, 2), default=1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.out, srv.mode, srv.token = a.out, a.mode, a.token
    srv.header = tuple(x.strip() for x in a.require_header.split(":", 1)) \
        if a.require_header else None
    srv.clock_offset, srv.ui, srv.version = a.clock_offset, a.ui, a.pyroscope_version
    srv.prefix = "/" + a.prefix.strip("/") if a.prefix.strip("/") else ""
    srv.lock, srv.n = threading.RLock(), 0
    srv.limiter = RateLimiter(P_RATE, P_BURST)
    srv.deltas = {}
    # numbering goes on across restarts (the backend-down test)
    idx = os.path.join(a.out, "index.jsonl")
    if os.path.exists(idx):
        srv.n = sum(1 for _ in open(idx))
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
