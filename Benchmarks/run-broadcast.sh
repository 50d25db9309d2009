#!/usr/bin/env bash
# Broadcast latency, end to end: `POST /v1/events/{key}/broadcasts` on a release `marquee serve` with
# its in-process APNs emulator, N broadcasts one after the other on one keep-alive connection
# (h2load --h1 -c1 -m1), each call's latency from h2load's per-request log. The reference in the same
# run: the same emulator answering the same kind of broadcast sent to it directly (h2load, HTTP/2
# over TLS, -c1 -m1, a provider token signed with the app's key, the event's channel), so Marquee's
# own share (API, PostgreSQL/SQLite, the APNs client) is the difference.
#   Benchmarks/run-broadcast.sh [BROADCASTS=2000] [RUNS=3] [BACKENDS="postgres sqlite"]
# Priority 5 (an update without alert, not important: no priority budget), one new event per run.
# MARQUEE_BENCH_BUSY_CORES=N runs N `yes > /dev/null` beside the whole run (issue 35 asks for one), so
# the figures hold with a core taken.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BROADCASTS=${1:-2000}; RUNS=${2:-3}; BACKENDS=${3:-postgres sqlite}
command -v h2load >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client >/dev/null; }
(cd "$ROOT" && swift build -c release --product marquee >&2)
BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/marquee"
export BIN ROOT HERE BROADCASTS RUNS BACKENDS
BUSY=()
for _ in $(seq "${MARQUEE_BENCH_BUSY_CORES:-0}"); do yes > /dev/null & BUSY+=($!); done
trap '[ ${#BUSY[@]} -eq 0 ] || kill "${BUSY[@]}" 2>/dev/null' EXIT
[ ${#BUSY[@]} -eq 0 ] || echo "beside: ${#BUSY[@]} x yes > /dev/null"
"$ROOT/scripts/with-postgres" bash "$HERE/broadcast/inner.sh"
