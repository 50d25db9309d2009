#!/usr/bin/env python3
"""run-late-joiners.sh's client: a start of the event's whole audience, and late joiners registering
while it runs.

  latejoin.py run BASE PUBLISHER_KEY APP_KEY EVENT_KEY ATTRIBUTES_TYPE LATE RATE PREFIX

Posts /v1/events/{key}/starts, then registers up to LATE new push-to-start tokens of the event's
attributes type and tag (each one a late joiner: the start's audience, registered after it began), RATE a
second, for as long as the start's job runs; the job is polled every 100 ms on a connection of its own.
Prints one JSON line: the job's seconds and its tokens, and each late joiner's token with the wall-clock
time its registration was answered (the start ledger's started_at, when APNs answered its start, is
compared with it by the caller)."""
import json, os, sys, threading, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fanout"))
from fanout import START_BODY, call, connect  # noqa: E402

def run(base, pub, app, event_key, attributes_type, late, rate, prefix):
    control = connect(base)
    t0 = time.monotonic()
    s, job = call(control, "POST", f"/v1/events/{event_key}/starts", pub, START_BODY)
    if s != 202:
        sys.exit(f"start: HTTP {s} {job}")
    finished = threading.Event()
    outcome = {}

    def poll():
        conn = connect(base)
        while True:
            time.sleep(0.1)
            s, view = call(conn, "GET", f"/v1/jobs/{job['id']}", pub)
            if s != 200:
                sys.exit(f"job: HTTP {s} {view}")
            if view["state"] in ("succeeded", "failed", "cancelled"):
                outcome.update(state=view["state"], seconds=round(time.monotonic() - t0, 3),
                               accepted=view["progress"]["accepted"], total=view["progress"].get("total"))
                finished.set()
                return
    poller = threading.Thread(target=poll, daemon=True)
    poller.start()

    registrations = []
    conn = connect(base)
    interval = 1.0 / rate
    next_at = time.monotonic() + interval
    for i in range(late):
        pause = next_at - time.monotonic()
        if pause > 0 and finished.wait(pause):
            break
        if finished.is_set():
            break
        next_at += interval
        token = f"{prefix}{i:056x}"
        s, body = call(conn, "PUT", f"/v1/push-to-start-tokens/{token}", app,
                       {"environment": "sandbox", "attributesType": attributes_type, "iosVersion": "18.2",
                        "deviceID": f"late-{prefix}-{i}", "tags": ["fans"]})
        answered = time.time()
        if s != 200:
            sys.exit(f"registration {i}: HTTP {s} {body}")
        registrations.append({"token": token, "registered": answered})
    finished.wait()
    print(json.dumps({"job": job["id"], **outcome, "registrations": registrations}))

if __name__ == "__main__":
    if len(sys.argv) != 10 or sys.argv[1] != "run":
        sys.exit(__doc__)
    run(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], int(sys.argv[7]), float(sys.argv[8]), sys.argv[9])
