#!/usr/bin/env python3
"""json_query.py FILE EXPR -- evaluate a Python expression over a converter
JSON file (alys_converter -f json); tests/lib.sh's json_query calls it.

Events get their frames from the stacks table ("stack", and "truncated"
when set) as with --inline-stacks. Names available to EXPR: d, header,
events, counters, end, names(e),
in_stack(e, s), select(kind=, size=, frame=, frames=, tid=), count(...),
total(...) (documented in tests/lib.sh). Booleans print as 1/0, numbers and
strings plainly, anything else as JSON.

Why a server: a 100,000-event trace is a 140 MB JSON file that takes ~7 s
to parse here, and a test asks a dozen questions of it. A large FILE is
parsed once by a server process that answers every later query on it over
a unix socket. The server lives in $ALYS_JQ_DIR (tests/lib.sh makes one per
test script and kills what is in it when the script exits); it also exits
by itself when FILE changes or goes away, when the test script
($ALYS_JQ_OWNER) is gone, or after 10 idle minutes. Without ALYS_JQ_DIR, or
for small files, the query is evaluated in this process.
"""
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import traceback

SERVE_ABOVE = 4 << 20  # bytes: smaller files parse faster than a server starts
IDLE_EXIT = 600


def namespace(d):
    header = d.get("header", {})
    events = d.get("events", [])
    # The default layout writes each stack once in d["stacks"]: give every
    # event its frames (and truncated flag) as --inline-stacks would.
    if "stacks" in d:
        table = {s["id"]: s for s in d["stacks"]}
        for e in events:
            st = table.get(e.get("stack_id"))
            e["stack"] = st["frames"] if st else []
            if st and st.get("truncated"):
                e["truncated"] = True

    def names(e):
        return [(fr.get("name") or "") for fr in (e.get("stack") or [])]

    def in_stack(e, s):
        return any(s in n for n in names(e))

    def in_order(e, subs):
        i = 0
        for n in names(e):
            if i < len(subs) and subs[i] in n:
                i += 1
        return i == len(subs)

    def select(kind=None, size=None, frame=None, frames=None, tid=None):
        out = []
        for e in events:
            if kind is not None and e.get("kind") != kind:
                continue
            if size is not None and e.get("size") != size:
                continue
            if tid is not None and e.get("tid") != tid:
                continue
            if frame is not None and not in_stack(e, frame):
                continue
            if frames is not None and not in_order(e, list(frames)):
                continue
            out.append(e)
        return out

    def count(**kw):
        return len(select(**kw))

    def total(**kw):
        return sum(e.get("size", 0) for e in select(**kw))

    return {"json": json, "d": d, "header": header, "events": events,
            "counters": d.get("counters", {}), "end": d.get("end", {}),
            "names": names, "in_stack": in_stack, "select": select,
            "count": count, "total": total}


def evaluate(ns, expr):
    v = eval(expr, dict(ns))
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float, str)):
        return str(v)
    return json.dumps(v)


def file_key(path):
    st = os.stat(path)
    return (os.path.realpath(path), st.st_mtime_ns, st.st_size, st.st_ino)


def socket_path(jq_dir, key):
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:16]
    return os.path.join(jq_dir, digest + ".sock")


def recv_all(conn):
    chunks = []
    while True:
        b = conn.recv(65536)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def serve(path, sock_path, owner):
    key = file_key(path)
    with open(path) as f:
        ns = namespace(json.load(f))
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = sock_path + ".%d" % os.getpid()
    srv.bind(tmp)
    srv.listen(4)
    os.rename(tmp, sock_path)  # clients see the socket only once it answers
    with open(sock_path + ".pid", "w") as f:
        f.write("%d\n" % os.getpid())
    srv.settimeout(1.0)
    last = time.monotonic()
    try:
        while True:
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                try:
                    os.kill(owner, 0)
                    if file_key(path) != key:
                        return
                except OSError:
                    return
                if time.monotonic() - last > IDLE_EXIT:
                    return
                continue
            last = time.monotonic()
            with conn:
                conn.settimeout(None)
                expr = recv_all(conn).decode()
                try:
                    out = "0\n" + evaluate(ns, expr) + "\n"
                except BaseException:
                    out = "1\n" + traceback.format_exc()
                conn.sendall(out.encode())
    finally:
        for p in (sock_path, sock_path + ".pid"):
            try:
                os.unlink(p)
            except OSError:
                pass


def ask(sock_path, expr):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(sock_path)
    c.sendall(expr.encode())
    c.shutdown(socket.SHUT_WR)
    reply = recv_all(c).decode()
    c.close()
    status, _, out = reply.partition("\n")
    if status == "0":
        sys.stdout.write(out)
        return 0
    sys.stderr.write(out)
    return 1


def stop_other_servers(jq_dir, keep):
    """One parsed file in memory at a time: tests move from file to file."""
    for name in os.listdir(jq_dir):
        p = os.path.join(jq_dir, name)
        if not name.endswith(".sock.pid") or p == keep + ".pid":
            continue
        try:
            with open(p) as f:
                os.kill(int(f.read()), 15)
        except (OSError, ValueError):
            pass


def query_via_server(jq_dir, path, expr):
    """Return the exit status, or None to evaluate in-process instead."""
    sock_path = socket_path(jq_dir, file_key(path))
    if not os.path.exists(sock_path):
        stop_other_servers(jq_dir, sock_path)
        owner = os.environ.get("ALYS_JQ_OWNER", str(os.getppid()))
        server = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve", path,
             sock_path, owner],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True)
        while not os.path.exists(sock_path):
            if server.poll() is not None:
                return None  # e.g. not JSON: the in-process run says why
            time.sleep(0.05)
    try:
        return ask(sock_path, expr)
    except OSError:
        return None


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    if len(sys.argv) != 3:
        sys.stderr.write("usage: json_query.py FILE EXPR\n")
        return 2
    path, expr = sys.argv[1], sys.argv[2]
    jq_dir = os.environ.get("ALYS_JQ_DIR")
    if jq_dir and os.path.isdir(jq_dir) and os.path.getsize(path) > SERVE_ABOVE:
        rc = query_via_server(jq_dir, path, expr)
        if rc is not None:
            return rc
    with open(path) as f:
        ns = namespace(json.load(f))
    try:
        print(evaluate(ns, expr))
    except Exception:
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
