"""Decode a pprof profile with protoc (an independent decoder) into dicts of
repeated fields: tests/lib.sh's pprof_query and tests/e2e/push_receiver.py."""
import ast
import gzip
import subprocess

PROTO_DIR = "/usr/share/gocode/src/github.com/google/pprof/proto"


def parse(lines, i=0):
    msg = {}
    while i < len(lines):
        l = lines[i].strip(); i += 1
        if not l:
            continue
        if l == "}":
            return msg, i
        if l.endswith("{"):
            sub, i = parse(lines, i)
            msg.setdefault(l[:-1].strip(), []).append(sub)
            continue
        k, v = l.split(":", 1); v = v.strip()
        if v.startswith('"'):
            v = ast.literal_eval("b" + v).decode("utf-8", "replace")
        else:
            v = {"true": 1, "false": 0}.get(v) if v in ("true", "false") else int(v)
        msg.setdefault(k, []).append(v)
    return msg, i


def decode_text(text):
    return parse(text.split("\n"))[0]


def decode(data):
    """data: a profile, gzipped or not. Raises on what protoc refuses."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I", PROTO_DIR,
                          PROTO_DIR + "/profile.proto"], input=data, capture_output=True,
                         check=True)
    return decode_text(out.stdout.decode())


def totals(p):
    """{sample type: sum of its values}"""
    st = p.get("string_table", [""])
    types = [st[t.get("type", [0])[0]] for t in p.get("sample_type", [])]
    sums = {t: 0 for t in types}
    for s in p.get("sample", []):
        for t, v in zip(types, s.get("value", [])):
            sums[t] += v
    return sums
