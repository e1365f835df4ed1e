#!/usr/bin/env python3
"""http_abuse.py HOST:PORT N: send N malformed requests to alys-bpf's --http
endpoint, over raw sockets, and check that none is served: each must get a
4xx status line (505 for an unknown HTTP version, as RFC 9110 says), or the
connection closed without a status (what an HTTP server does with bytes
that are not HTTP). Kinds: paths outside the
endpoints (traversal, encoded, NUL, huge), bad ?seconds=, methods other than
GET/HEAD, huge and malformed headers, garbage, and slow clients that send
part of a request and stall while the others go on. Exits 1 on any 2xx/3xx
or 5xx answer, or when the endpoint stops answering a good request."""
import random
import socket
import sys
import threading
import time

host, port = sys.argv[1].rsplit(":", 1)
port = int(port)
n = int(sys.argv[2])
rng = random.Random(21)

BAD_PATHS = [
    "/", "/debug", "/debug/pprof/goroutine", "/debug/pprof/profile", "/etc/passwd",
    "/debug/pprof/../../etc/passwd", "/debug/pprof/%2e%2e/%2e%2e/etc/passwd",
    "/debug/pprof/allocs/", "/debug/pprof/allocs%00", "/METRICS", "//debug/pprof/heap",
    "/debug/pprof/heap.pb.gz", "/metrics/x", "/%", "/%zz", "/debug/pprof/allocs\\",
]
BAD_SECONDS = ["abc", "0", "-1", "3601", "99999999999999999999", "1.5", "", "1e3",
               "%31%30x", "3;rm", "0x10"]


def request_bytes(i):
    kind = i % 10
    if kind == 0:
        return "GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % rng.choice(BAD_PATHS), "path"
    if kind == 1:
        ep = rng.choice(["allocs", "heap"])
        return ("GET /debug/pprof/%s?seconds=%s HTTP/1.1\r\nHost: x\r\n\r\n"
                % (ep, rng.choice(BAD_SECONDS))), "seconds"
    if kind == 2:
        m = rng.choice(["POST", "PUT", "DELETE", "TRACE", "CONNECT", "PATCH", "FOO"])
        return "%s /debug/pprof/allocs HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" % m, "method"
    if kind == 3:
        return ("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n"
                % ("a" * rng.choice([20000, 60000, 200000]))), "huge header"
    if kind == 4:
        return ("GET /metrics HTTP/1.1\r\nHost: x\r\n"
                + "".join("X-%d: y\r\n" % k for k in range(3000)) + "\r\n"), "many headers"
    if kind == 5:
        return "GET /%s HTTP/1.1\r\nHost: x\r\n\r\n" % ("a" * rng.choice([5000, 50000])), "huge path"
    if kind == 6:
        return "GET /metrics HTTP/1.1\r\nHost x\r\nBroken header line\r\n\r\n", "bad header"
    if kind == 7:
        return bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 40, 4000]))) + b"\r\n\r\n", "garbage"
    if kind == 8:
        return "GET /debug/pprof/allocs HTTP/9.9\r\nHost: x\r\n\r\n", "version"
    return "GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", "length"


def send(data, timeout=3):
    """The status code answered, 0 when closed without one."""
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(data if isinstance(data, bytes) else data.encode("latin-1"))
        buf = b""
        while b"\r\n" not in buf and len(buf) < 200:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        buf = b""
    finally:
        s.close()
    line = buf.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) >= 2 and line[0].startswith(b"HTTP/") and line[1].isdigit() else 0


def slow_client(results):
    """Half a request, a stall, then nothing more: the server's timeout ends it."""
    s = socket.create_connection((host, port), timeout=30)
    try:
        s.sendall(b"GET /debug/pprof/allocs HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        time.sleep(2)
        s.sendall(b"a")
        s.settimeout(20)
        got = s.recv(200)
        line = got.split(b"\r\n", 1)[0].split()
        results.append(int(line[1]) if len(line) >= 2 and line[1].isdigit() else 0)
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        results.append(0)
    finally:
        s.close()


bad = {}
seen = {}
took = {}
slow = []
threads = []
for i in range(n):
    if i % 100 == 0 and len(threads) < 8:     # a few slow clients meanwhile
        t = threading.Thread(target=slow_client, args=(slow,))
        t.start()
        threads.append(t)
    data, kind = request_bytes(i)
    t0 = time.time()
    code = send(data)
    took[kind] = took.get(kind, 0) + time.time() - t0
    seen.setdefault(kind, {}).setdefault(code, 0)
    seen[kind][code] += 1
    # 505 HTTP Version Not Supported is the one 5xx a bad version gets (RFC 9110)
    if not (code == 0 or 400 <= code < 500 or (kind == "version" and code == 505)):
        bad.setdefault(kind, []).append(code)
for t in threads:
    t.join()
for code in slow:
    if not (code == 0 or 400 <= code < 500):
        bad.setdefault("slow", []).append(code)

good = send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
for kind, codes in sorted(seen.items()):
    print("%-13s %5.2f s %s" % (kind, took[kind], " ".join("%s:%d" % (c or "closed", k) for c, k in sorted(codes.items()))))
print("slow clients  %s" % " ".join(str(c or "closed") for c in slow))
print("a good request after them: %d" % good)
if bad:
    print("served or failed:", bad)
sys.exit(0 if not bad and good == 200 and sum(sum(c.values()) for c in seen.values()) == n else 1)
