#!/usr/bin/env bash
# The start fan-out, end to end: push-to-start tokens stored in PostgreSQL, `POST /v1/events/{key}/starts`,
# every token's push sent to the nginx APNs sink of ../shared/bench (TLS :8443) and its outcome
# committed, timed from the API call until the job reads `succeeded`; the h2load ceiling of
# ../shared/bench runs before each fan-out in the same run and the rate is given as its ratio.
#   Benchmarks/run-fanout.sh [TOKENS=1000000] [RUNS=3] [SMALL=100000]
# Each run: the ceiling (the median of three h2load runs), then a fan-out of SMALL tokens and one of TOKENS tokens, each in a fresh
# `marquee serve` (release) so that its peak resident set (VmHWM) is the fan-out's own.
# The nginx sink answers only POST /3/device/*: channel management (the event's channel, created
# when the event is put) goes to a `marquee emulator` over h2c, so the starts are the iOS 18 kind
# (`input-push-channel`); the device pushes go to the sink. Loading the tokens (batches of 10,000
# through the API) is not timed, nor the `VACUUM ANALYZE` before each fan-out. MARQUEE_JOBS_* / MARQUEE_APNS_CONNECTIONS in the environment tune
# the server (ServerConfiguration.swift), e.g. MARQUEE_JOBS_PARTITIONS=4. To compare settings side by side
# against one load of the tokens, MARQUEE_BENCH_VARIANTS="NAME:VAR=VALUE,VAR=VALUE NAME2:-" makes each
# run's fan-outs one of TOKENS per variant, in turn (SMALL is not loaded then), each server started with
# its variant's variables ("-": none beyond the environment's); BIN=PATH among them runs another build's
# `marquee` (a copy of an earlier commit's release binary), two commits side by side. MARQUEE_BENCH_PG_STATEMENTS=1
# prints, after each fan-out, the statements PostgreSQL spent the most time on (pg_stat_statements).
# The server runs with its defaults but for the stream budget: 2 connections of at most 50 streams
# (MARQUEE_APNS_STREAMS_PER_CONNECTION, default here 50; the service's own default is 1000, what a
# link to Apple with its round trips needs), the ceiling's 100. Its adaptive concurrency
# (apns.adaptiveConcurrency) keeps about 20 of each connection's 50 in flight on loopback. Neither
# the budget nor the window holds it back: 100 per connection ran no faster than 50, and the whole
# budget in flight (MARQUEE_APNS_ADAPTIVE_CONCURRENCY=false), or one connection of 100, no faster
# than the default, side by side (docs/history/benchmarks.md, 2026-12-01).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOKENS=${1:-1000000}; RUNS=${2:-3}; SMALL=${3:-100000}
(cd "$ROOT" && swift build -c release --product marquee >&2)
BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/marquee"

source "$HERE/lib.sh"
export BIN ROOT HERE SHARED SINK_DIR TOKENS RUNS SMALL
if [ "${MARQUEE_BENCH_PG_STATEMENTS:-0}" = 1 ]; then
  export MARQUEE_PG_OPTIONS="${MARQUEE_PG_OPTIONS:-} -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
fi
export MARQUEE_APNS_STREAMS_PER_CONNECTION=${MARQUEE_APNS_STREAMS_PER_CONNECTION:-50}
"$ROOT/scripts/with-postgres" bash "$HERE/fanout/inner.sh"
