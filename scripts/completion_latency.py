#!/usr/bin/env python3
"""Completion latency of `jadpo lsp` on a generated corpus.

Usage: scripts/completion_latency.py JADPO CORPUS_DIR [REQUESTS]

Opens one source file of the corpus (gen_corpus output), waits for its
first diagnostics (the cold open), then asks for completion REQUESTS times
(default 200) at three kinds of places in turn: after `stripe.`, inside a
construction, and among names in an action body. Prints p50/p95/max in ms.
"""
import json, os, subprocess, sys, time

def send(p, msg):
    body = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()

def read(p):
    length = None
    while True:
        line = p.stdout.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(p.stdout.read(length))

def wait_for(p, pred):
    while True:
        m = read(p)
        if pred(m):
            return m

def main():
    jadpo, corpus = sys.argv[1], os.path.abspath(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    src = next(os.path.join(d, f) for d, _, fs in sorted(os.walk(os.path.join(corpus, "src"))) for f in sorted(fs) if f.endswith(".jadpo") and "orders" in f)
    text = open(src).read()
    lines = text.split("\n")
    body = next(i for i, l in enumerate(lines) if l.startswith("action ")) + 1
    # Three places: a new line `stripe.`, a construction, a body line.
    edited = lines[:body] + ["    stripe.", "    var x = stripe.CustomerCreate { "] + lines[body:]
    edited_text = "\n".join(edited)
    places = [(body, 11), (body + 1, 38), (body + 2, 4)]
    p = subprocess.Popen([jadpo, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    uri = "file://" + src
    send(p, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": "file://" + corpus, "capabilities": {}}})
    wait_for(p, lambda m: m.get("id") == 1)
    send(p, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    t0 = time.perf_counter()
    send(p, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "jadpo", "version": 1, "text": edited_text}}})
    wait_for(p, lambda m: m.get("method") == "textDocument/publishDiagnostics")
    cold = (time.perf_counter() - t0) * 1e3
    times = []
    for i in range(n):
        line, col = places[i % 3]
        rid = 100 + i
        t = time.perf_counter()
        send(p, {"jsonrpc": "2.0", "id": rid, "method": "textDocument/completion", "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}}})
        m = wait_for(p, lambda m: m.get("id") == rid)
        times.append((time.perf_counter() - t) * 1e3)
        assert m.get("result"), m
    send(p, {"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
    wait_for(p, lambda m: m.get("id") == 9)
    send(p, {"jsonrpc": "2.0", "method": "exit"})
    p.wait(timeout=30)
    times.sort()
    pct = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    print(f"cold open {cold:.0f} ms; completion over {n} requests: p50 {pct(0.5):.1f} ms, p95 {pct(0.95):.1f} ms, max {times[-1]:.1f} ms")

main()
