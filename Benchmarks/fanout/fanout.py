#!/usr/bin/env python3
"""Helpers of run-fanout.sh: load push-to-start tokens through the API, and time one start fan-out.

  fanout.py load BASE APP_KEY ATTRIBUTES_TYPE COUNT PREFIX   batches of 10,000 (not timed)
  fanout.py start BASE PUBLISHER_KEY EVENT_KEY SERVE_PID      one JSON line: seconds, progress, RSS

`start` posts /v1/events/{key}/starts and polls /v1/jobs/{id} every 100 ms until the job is
`succeeded` (or failed/cancelled); the time is from just before the POST to the poll that saw it
finished. Meanwhile it samples VmRSS of the serve process (its maximum, and a series of one sample a
second); VmHWM is read at the end. Around the fan-out it reads the CPU time of the server, the nginx
sink's workers and PostgreSQL's processes and the machine's idle time (`/proc`): each one's cores
busy over the fan-out and microseconds per token (`cpu`), to tell a fan-out short of CPU from one
waiting on itself. The idle cores (idle and I/O wait) come with the I/O wait and the hypervisor's
steal apart: a core idle while every process waits on the disk (the WAL's fsync) or on the host is
not a core the fan-out could have used."""
import http.client, json, os, sys, time, urllib.parse

# The start every fan-out posts (run-late-joiners.sh posts it too).
START_BODY = {
    "environment": "sandbox",
    "attributes": {"matchId": "m-2026-01-01-hfc-afc", "homeTeam": "Home FC", "awayTeam": "Away FC",
                   "competition": "League", "venue": "Example Stadium"},
    "contentState": {"homeTeamScore": 0, "awayTeamScore": 0, "period": "1st half", "clock": "00:00", "status": "live",
                     "lastEvent": {"type": "kickoff", "description": "The match has started"}},
    "alert": {"title": {"loc-key": "%@ vs %@ has started", "loc-args": ["Home FC", "Away FC"]},
              "body": {"loc-key": "Follow the match live", "loc-args": []}, "sound": "default"},
}

def connect(base):
    u = urllib.parse.urlparse(base)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=120)

def call(conn, method, path, key, body=None):
    headers = {"Authorization": f"Bearer {key}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, path, data, headers)
    r = conn.getresponse()
    raw = r.read()
    return r.status, (json.loads(raw) if raw else None)

def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0

TICKS = os.sysconf("SC_CLK_TCK")

def process_class(pid, server_pid):
    """Which of the fan-out's parties a process is: the server under test, the sink, PostgreSQL."""
    if pid == server_pid:
        return "server"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
    except OSError:
        return None
    if cmd.startswith(b"nginx: worker"):
        return "nginx"
    if cmd.startswith(b"postgres"):
        return "postgres"
    return None

def cpu_snapshot(server_pid):
    """CPU ticks (user + system) of every process of each class, by pid, and the machine's idle,
    I/O wait and steal ticks (/proc/stat's cpu line: user nice system idle iowait irq softirq steal)."""
    processes = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        kind = process_class(pid, server_pid)
        if kind is None:
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        processes[pid] = (kind, int(fields[11]) + int(fields[12]))
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:]]
    return {"processes": processes, "idle": cpu[3] + cpu[4], "iowait": cpu[4], "steal": cpu[7], "at": time.monotonic()}

def cpu_used(before, after, tokens):
    """Cores each class kept busy between two snapshots, and its microseconds of CPU per token. A
    process that started in between counts from zero; one that ended in between is lost (PostgreSQL
    keeps the server's connections through a fan-out)."""
    seconds = after["at"] - before["at"]
    totals = {"server": 0, "nginx": 0, "postgres": 0}
    for pid, (kind, ticks) in after["processes"].items():
        earlier = before["processes"].get(pid)
        totals[kind] += ticks - (earlier[1] if earlier and earlier[0] == kind else 0)
    used = {kind: {"cores": round(t / TICKS / seconds, 2), "us_per_token": round(t / TICKS / tokens * 1e6, 1)}
            for kind, t in totals.items()}
    used["idle_cores"] = round((after["idle"] - before["idle"]) / TICKS / seconds, 2)
    used["iowait_cores"] = round((after["iowait"] - before["iowait"]) / TICKS / seconds, 2)
    used["steal_cores"] = round((after["steal"] - before["steal"]) / TICKS / seconds, 2)
    return used

def load(base, key, attributes_type, count, prefix):
    conn = connect(base)
    batch = 10_000
    started = time.monotonic()
    for first in range(0, count, batch):
        tokens = [{"token": f"{prefix}{i:056x}", "environment": "sandbox", "attributesType": attributes_type,
                   "iosVersion": "18.2", "deviceID": f"d{prefix}{i}", "tags": ["fans"]}
                  for i in range(first, min(first + batch, count))]
        s, body = call(conn, "POST", "/v1/push-to-start-tokens/batch", key, {"tokens": tokens})
        if s != 200:
            sys.exit(f"batch at {first}: HTTP {s} {body}")
    took = time.monotonic() - started
    print(f"loaded {count} {attributes_type} tokens in {took:.1f} s ({count / took:,.0f}/s, not timed)", file=sys.stderr)

def start(base, key, event_key, pid):
    conn = connect(base)
    rss_before = status_kib(pid, "VmRSS")
    rss_max = rss_before
    cpu_before = cpu_snapshot(pid)
    t0 = time.monotonic()
    s, job = call(conn, "POST", f"/v1/events/{event_key}/starts", key, START_BODY)
    if s != 202:
        sys.exit(f"start: HTTP {s} {job}")
    job_id = job["id"]
    next_mark = t0 + 1
    samples = 0
    series = []  # VmRSS every second, MiB: a steady growth tells something kept per token from a step
    sent_series = []  # the job's pushes sent, every second: a stall shows as a flat step
    while True:
        time.sleep(0.1)
        rss = status_kib(pid, "VmRSS")
        rss_max = max(rss_max, rss)
        samples += 1
        s, job = call(conn, "GET", f"/v1/jobs/{job_id}", key)
        if s != 200:
            sys.exit(f"job: HTTP {s} {job}")
        # Once a second by the clock (a poll takes longer than its 0.1 s pause).
        if time.monotonic() >= next_mark:
            series.append(round(rss / 1024, 1))
            sent_series.append(job["progress"]["sent"])
            next_mark += 1
        if job["state"] in ("succeeded", "failed", "cancelled"):
            break
    seconds = time.monotonic() - t0
    cpu_after = cpu_snapshot(pid)
    p = job["progress"]
    print(json.dumps({
        "job": job_id, "state": job["state"], "seconds": round(seconds, 3),
        "total": p.get("total"), "sent": p["sent"], "accepted": p["accepted"], "failed": p["failed"],
        "rate": round(p["accepted"] / seconds, 1),
        "rss_before_kib": rss_before, "rss_max_sampled_kib": rss_max, "hwm_kib": status_kib(pid, "VmHWM"),
        "rss_samples": samples, "rss_series_mib": series, "sent_series": sent_series,
        "cpu": cpu_used(cpu_before, cpu_after, max(1, p["sent"])),
    }))

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "load":
        load(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    elif cmd == "start":
        start(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.exit(__doc__)
