#!/usr/bin/env python3
"""Probes a running `marquee serve` on loopback as a hostile client would, and prints figures for
RELIABILITY.md's security section. Bounded in count and time (about 80 s with the defaults).

  scripts/security-probe.py --base http://127.0.0.1:18421 --pid PID --deployment-key mq_… \
      [--log FILE] [--data-dir DIR]

- secrets: an API key created with an Idempotency-Key, then searched for in its replay, the log
  file, /metrics, and the data folder's files (the SQLite database and its WAL);
- memory: RSS of PID before, at its peak during, and after 100 connections that each send the
  headers of a 4 MiB - 1 upload without a key and then try to send the body;
- idle: 20 connections that send nothing, and when the server closes them;
- slow headers: 50 connections sending one header byte a second, and when they are closed, with
  the latency of a normal request meanwhile;
- throttle: 300 wrong keys from one address, counted by answer (the uploads before count too).
Standard library only.
"""
import argparse, json, os, socket, threading, time, urllib.request, urllib.error

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

def request(base, method, path, key=None, body=None, headers=None):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    if key: req.add_header("Authorization", f"Bearer {key}")
    if body is not None: req.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items(): req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()

def connect(base):
    host, port = base.split("//")[1].split(":")
    return socket.create_connection((host, int(port)), timeout=120)

def upload_without_key(base, results, index):
    size = 4 * 1024 * 1024 - 1
    s = connect(base)
    started = time.monotonic()
    s.sendall(f"POST /v1/push-to-start-tokens/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode())
    sent, chunk, error = 0, b" " * 65536, None
    s.settimeout(2)
    try:
        while sent < size:
            sent += s.send(chunk[: min(len(chunk), size - sent)])
    except (BrokenPipeError, ConnectionResetError, socket.timeout) as e:
        error = type(e).__name__
    s.settimeout(30)
    answer = b""
    try:
        while True:
            data = s.recv(65536)
            if not data: break
            answer += data
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    results[index] = (answer[:12].decode(errors="replace"), sent, error, time.monotonic() - started)

def memory(base, pid):
    before = rss_kib(pid)
    peak = [before]
    done = threading.Event()
    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(pid)); time.sleep(0.05)
    sampler = threading.Thread(target=sample); sampler.start()
    results = [None] * 100
    threads = [threading.Thread(target=upload_without_key, args=(base, results, i)) for i in range(100)]
    started = time.monotonic()
    for t in threads: t.start()
    for t in threads: t.join()
    elapsed = time.monotonic() - started
    time.sleep(1)
    done.set(); sampler.join()
    after = rss_kib(pid)
    statuses = {}
    for status, _, _, _ in results: statuses[status] = statuses.get(status, 0) + 1
    sent = sorted(r[1] for r in results)
    print(f"memory: 100 unauthenticated 4 MiB - 1 uploads in {elapsed:.1f} s: answers {statuses}; "
          f"RSS before {before // 1024} MiB, peak {peak[0] // 1024} MiB, after {after // 1024} MiB; "
          f"body bytes each client got into its socket before the close: median {sent[50] // 1024} KiB, max {sent[-1] // 1024} KiB")

def idle(base, count=20, patience=120):
    sockets = [connect(base) for _ in range(count)]
    opened = time.monotonic()
    closed = []
    for s in sockets:
        s.settimeout(max(1, patience - (time.monotonic() - opened)))
        try:
            data = s.recv(1)
            if data == b"": closed.append(time.monotonic() - opened)
        except (ConnectionResetError,):
            closed.append(time.monotonic() - opened)
        except socket.timeout:
            pass
        s.close()
    print(f"idle: {len(closed)} of {count} idle connections closed by the server, "
          f"after {min(closed):.1f}–{max(closed):.1f} s" if closed else f"idle: none of {count} closed within {patience} s")

def slow_headers(base, count=50, patience=60):
    sockets = [connect(base) for _ in range(count)]
    line = b"POST /v1/push-to-start-tokens/batch HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    opened = time.monotonic()
    alive = set(range(count))
    latencies = []
    closed_at = {}
    position = 0
    while alive and time.monotonic() - opened < patience:
        for i in list(alive):
            try:
                sockets[i].send(line[position % len(line):][:1])
            except (BrokenPipeError, ConnectionResetError):
                alive.discard(i); closed_at[i] = time.monotonic() - opened
        position += 1
        t = time.monotonic()
        try:
            request(base, "GET", "/health/live")
        except OSError:
            pass  # no answer within request()'s 30 s: counted as what it took
        latencies.append(time.monotonic() - t)
        time.sleep(1)
    for s in sockets: s.close()
    closed = sorted(closed_at.values())
    print(f"slow headers: {len(closed)} of {count} connections sending a header byte a second closed, "
          f"after {closed[0]:.1f}–{closed[-1]:.1f} s (a write after the close is what notices it); "
          f"GET /health/live meanwhile: max {max(latencies) * 1000:.0f} ms" if closed else "slow headers: none closed")

def throttle(base):
    counts = {}
    started = time.monotonic()
    for i in range(300):
        status, headers, _ = request(base, "GET", "/v1/events", key=f"mq_000000000000_wrongwrongwrongwrong{i}")
        counts[status] = counts.get(status, 0) + 1
    print(f"throttle: 300 wrong keys in {time.monotonic() - started:.1f} s from one address: {counts}")

def secrets(base, deployment_key, log, data_dir):
    status, _, body = request(base, "POST", "/v1/apps", key=deployment_key,
        body={"name": "Probe", "bundleID": f"com.example.probe{int(time.time())}", "teamID": "TEAM123456", "environments": ["sandbox"]})
    app = json.loads(body)["id"]
    status, _, body = request(base, "POST", f"/v1/apps/{app}/api-keys", key=deployment_key, body={"role": "admin", "label": "probe"})
    admin = json.loads(body)["key"]
    status, _, body = request(base, "POST", f"/v1/apps/{app}/api-keys", key=admin, body={"role": "publisher", "label": "ci"}, headers={"Idempotency-Key": "k1"})
    secret = json.loads(body)["key"]
    replay = request(base, "POST", f"/v1/apps/{app}/api-keys", key=admin, body={"role": "publisher", "label": "ci"}, headers={"Idempotency-Key": "k1"})
    found = []
    _, _, metrics = request(base, "GET", "/metrics")
    if secret.encode() in metrics: found.append("/metrics")
    if secret.encode() in replay[2]: found.append("the replayed answer")
    if log and os.path.exists(log) and secret.encode() in open(log, "rb").read(): found.append(log)
    for root, _, files in os.walk(data_dir or "/nonexistent"):
        for name in files:
            path = os.path.join(root, name)
            if secret.encode() in open(path, "rb").read(): found.append(path)
    print(f"secrets: a new key's secret found in: {found or 'nothing'} (searched the replayed answer, /metrics, "
          f"{log or 'no log'}, every file under {data_dir or 'no data folder'})")

if __name__ == "__main__":
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--base", required=True)
    arguments.add_argument("--pid", type=int, required=True)
    arguments.add_argument("--deployment-key", required=True)
    arguments.add_argument("--log")
    arguments.add_argument("--data-dir")
    options = arguments.parse_args()
    # The secrets first: the probes after it fail authentication on purpose, and the throttle then
    # refuses this address (auth.throttle.windowSeconds).
    secrets(options.base, options.deployment_key, options.log, options.data_dir)
    idler = threading.Thread(target=idle, args=(options.base,)); idler.start()
    memory(options.base, options.pid)
    slow_headers(options.base)
    throttle(options.base)
    idler.join()
