#!/usr/bin/python3
"""A test backend for alys-bpf --push: Pyroscope's and Parca's push APIs as
documented, rejecting what their servers reject, recording what arrives.

  push_receiver.py --port-file F --out DIR [--mode MODE] [--token T]
                   [--require-header 'Name: value']

  POST /push.v1.PusherService/Push   Pyroscope, Connect protocol, JSON:
      {"series":[{"labels":[{"name","value"}...],"samples":[{"ID","rawProfile"}]}]}
  POST /api/profiles/writeraw        Parca's HTTP/JSON gateway (mounted under
                                     /api: parca pkg/server/server.go):
      {"series":[{"labels":{"labels":[...]},"samples":[{"rawProfile"}]}]}

Rejected with 400: a body that is not that JSON, a series without a
non-empty service_name label, rawProfile that is not strict base64, a
profile `go tool pprof -raw` cannot read. 401 without the bearer token,
403 without the required header, 415 without Content-Type application/json,
404 elsewhere.

Each accepted profile: DIR/N.pb.gz and one line in DIR/index.jsonl
({"n","api","labels","time_nanos","duration_nanos","period_type","totals"}).
Each request, accepted or not: one line in DIR/requests.jsonl.

Accepted: 200 with {} as application/json, as both servers answer.

MODE (what a failing server does to every request): ok (default), close
(drops the connection unanswered), slow:S (answers after S seconds),
status:CODE (answers CODE), html (200 with an HTML page: a web UI, as
Parca's answers any path outside /api), empty (200, no body), redirect
(302 to /login).
"""
import argparse
import base64
import binascii
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pprof_text import decode, totals  # noqa: E402

PATHS = {"/push.v1.PusherService/Push": "pyroscope", "/api/profiles/writeraw": "parca"}
MAX_BODY = 64 << 20


class Bad(Exception):
    pass


def labels_of(api, series):
    raw = series.get("labels")
    if api == "parca":
        if not isinstance(raw, dict):
            raise Bad("labels: want a LabelSet object {\"labels\": [...]}")
        raw = raw.get("labels")
    if not isinstance(raw, list):
        raise Bad("labels: want a list of {name, value}")
    out = {}
    for l in raw:
        if not isinstance(l, dict) or not isinstance(l.get("name"), str) or \
                not isinstance(l.get("value", ""), str):
            raise Bad("label: want {name: string, value: string}")
        if l["name"] in out:
            raise Bad("duplicate label " + l["name"])
        out[l["name"]] = l.get("value", "")
    if not out.get("service_name"):
        raise Bad("series without a service_name label")
    return out


def check_pprof(data):
    with tempfile.NamedTemporaryFile(suffix=".pb.gz") as f:
        f.write(data)
        f.flush()
        r = subprocess.run(["go", "tool", "pprof", "-raw", f.name], capture_output=True,
                           timeout=60)
        if r.returncode:
            raise Bad("go tool pprof cannot read the profile: " +
                      r.stderr.decode(errors="replace")[:200])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, text, ctype="text/plain", extra=()):
        body = (text + "\n").encode() if text else b""
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with self.server.lock:
            with open(os.path.join(self.server.out, "requests.jsonl"), "a") as f:
                f.write(json.dumps({"path": self.path, "status": code, "text": text,
                                    "t": time.time()}) + "\n")

    def do_GET(self):
        self.answer(404, "not found")

    def do_POST(self):
        mode = self.server.mode
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY:
            return self.answer(413, "body too large")
        body = self.rfile.read(length)
        if mode == "close":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if mode.startswith("slow:"):
            time.sleep(float(mode[5:]))
        if mode.startswith("status:"):
            return self.answer(int(mode[7:]), "failing on purpose")
        if mode == "html":
            return self.answer(200, "<!doctype html><html><body>Parca</body></html>", "text/html")
        if mode == "empty":
            return self.answer(200, "")
        if mode == "redirect":
            return self.answer(302, "", extra=(("Location", "/login"),))
        api = PATHS.get(self.path)
        if not api:
            return self.answer(404, "not found: " + self.path)
        if self.server.token and \
                self.headers.get("Authorization") != "Bearer " + self.server.token:
            return self.answer(401, "unauthenticated")
        if self.server.header:
            name, value = self.server.header
            if self.headers.get(name) != value:
                return self.answer(403, "missing " + name)
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != \
                "application/json":
            return self.answer(415, "want Content-Type: application/json")
        try:
            self.accept(api, body)
        except Bad as e:
            return self.answer(400, "invalid_argument: " + str(e))
        self.answer(200, "{}", "application/json")

    def accept(self, api, body):
        try:
            req = json.loads(body)
        except ValueError as e:
            raise Bad("not JSON: %s" % e)
        if not isinstance(req, dict) or not isinstance(req.get("series"), list) or \
                not req["series"]:
            raise Bad("want {\"series\": [...]}")
        got = []
        for series in req["series"]:
            if not isinstance(series, dict):
                raise Bad("series: want objects")
            labels = labels_of(api, series)
            samples = series.get("samples")
            if not isinstance(samples, list) or not samples:
                raise Bad("series without samples")
            for s in samples:
                raw = s.get("rawProfile") if isinstance(s, dict) else None
                if not isinstance(raw, str):
                    raise Bad("sample without rawProfile")
                try:
                    data = base64.b64decode(raw, validate=True)
                except (binascii.Error, ValueError) as e:
                    raise Bad("rawProfile is not base64: %s" % e)
                check_pprof(data)
                try:
                    p = decode(data)
                except Exception as e:  # protoc refused what pprof read
                    raise Bad("profile does not decode: %s" % e)
                got.append((labels, data, p))
        with self.server.lock:
            for labels, data, p in got:
                self.server.n += 1
                n = self.server.n
                with open(os.path.join(self.server.out, "%d.pb.gz" % n), "wb") as f:
                    f.write(data)
                st = p.get("string_table", [""])
                pt = p.get("period_type", [{}])[0]
                rec = {"n": n, "api": api, "labels": labels, "t": time.time(),
                       "time_nanos": p.get("time_nanos", [0])[0],
                       "duration_nanos": p.get("duration_nanos", [0])[0],
                       "period_type": [st[pt.get("type", [0])[0]], st[pt.get("unit", [0])[0]]],
                       "totals": totals(p)}
                with open(os.path.join(self.server.out, "index.jsonl"), "a") as f:
                    f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--token")
    ap.add_argument("--require-header")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.out, srv.mode, srv.token = a.out, a.mode, a.token
    srv.header = tuple(x.strip() for x in a.require_header.split(":", 1)) \
        if a.require_header else None
    srv.lock, srv.n = threading.Lock(), 0
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
