#!/usr/bin/env bash
# Late joiners while a big start runs: TOKENS push-to-start tokens stored in PostgreSQL, a start of
# all of them (`POST /v1/events/{key}/starts`, to the nginx APNs sink of ../shared/bench), and while its
# job runs new tokens of the event's audience registering one by one (`PUT /v1/push-to-start-tokens/…`,
# RATE a second, LATE at most). Each late joiner's latency is from its registration's answer to
# APNs' answer to its start (the start ledger's `started_at`), both on this machine's wall clock.
#   Benchmarks/run-late-joiners.sh [TOKENS=100000] [RUNS=3] [LATE=200] [RATE=50]
# Each run is a fresh `marquee serve` (release) and a new event; one JSON line per run: the start's
# seconds, how many late joiners registered while it ran and were started, and their latency p50, p99
# and max in milliseconds. An event's starts run one after another (`jobs.serial_key`): a late joiner
# who registers while the big start runs is started when it has finished, so the latency is bounded
# by what remains of that start. MARQUEE_* in the environment tune the server as in run-fanout.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOKENS=${1:-100000}; RUNS=${2:-3}; LATE=${3:-200}; RATE=${4:-50}
(cd "$ROOT" && swift build -c release --product marquee >&2)
BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/marquee"

source "$HERE/lib.sh"
export BIN ROOT HERE SHARED SINK_DIR TOKENS RUNS LATE RATE
export MARQUEE_APNS_STREAMS_PER_CONNECTION=${MARQUEE_APNS_STREAMS_PER_CONNECTION:-50}
"$ROOT/scripts/with-postgres" bash "$HERE/latejoin/inner.sh"
