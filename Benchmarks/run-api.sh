#!/usr/bin/env bash
# Push-to-start token registration through the REST API on PostgreSQL: a release `marquee serve`
# on a throwaway PostgreSQL 15 (scripts/with-postgres), driven by wrk from another process on
# loopback. Batches of 1,000 new tokens (tokens/s), then single-token PUTs (requests/s, p50/p99).
#   run-api.sh [DURATION=20s] [CONNECTIONS=16] [RUNS=3]     (MARQUEE_BENCH_ANALYZE=1: ANALYZE before the singles;
#   SINGLE_CONTENT_TYPE="application/json;charset=UTF-8": the singles through the generated route)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DURATION=${1:-20s}; CONNECTIONS=${2:-16}; RUNS=${3:-3}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
(cd "$ROOT" && swift build -c release --product marquee >&2)
BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/marquee"
export BIN DURATION CONNECTIONS RUNS HERE ROOT
exec "$ROOT/scripts/with-postgres" bash -c '
set -euo pipefail
WORK=$(mktemp -d); PORT=18480
URL="postgres://$POSTGRES_USER:$POSTGRES_PASSWORD@$POSTGRES_HOST:$POSTGRES_PORT/$POSTGRES_DATABASE?sslmode=disable"
MARQUEE_SECRETS_MASTER_KEYS="bench:$(head -c32 /dev/urandom | base64)" "$BIN" serve --database-url "$URL" --port $PORT \
  --data-dir "$WORK" --sql-dir "$ROOT/sql" --log-level warning > "$WORK/serve.log" 2>&1 &
SERVER=$!
trap "kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf $WORK" EXIT
for _ in $(seq 100); do grep -q "^    mq_" "$WORK/serve.log" 2>/dev/null && break; sleep 0.2; done
ADMIN=$(grep -o "mq_[A-Za-z0-9_-]*" "$WORK/serve.log" | head -1)
BASE=http://127.0.0.1:$PORT
APP=$(curl -sf -XPOST $BASE/v1/apps -H "Authorization: Bearer $ADMIN" -H "Content-Type: application/json" \
  -d "{\"name\":\"Bench\",\"bundleID\":\"com.example.bench\",\"teamID\":\"BENCH12345\",\"environments\":[\"sandbox\"]}" | sed -n "s/.*\"id\" *: *\"\([^\"]*\)\".*/\1/p")
export APP_KEY=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" -H "Content-Type: application/json" \
  -d "{\"role\":\"app\"}" | sed -n "s/.*\"key\" *: *\"\([^\"]*\)\".*/\1/p")
[ -n "$APP_KEY" ] || { echo "setup failed: no app key" >&2; cat "$WORK/serve.log" >&2; exit 1; }
echo "load before: $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) cores; wrk -t2 -c$CONNECTIONS -d$DURATION"
for run in $(seq "$RUNS"); do
  out=$(BATCH=1000 wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$HERE/api/register-batch.lua" $BASE)
  rps=$(echo "$out" | sed -n "s/^Requests\/sec: *\([0-9.]*\)/\1/p")
  bad=$(echo "$out" | sed -n "s/.*Non-2xx or 3xx responses: *\([0-9]*\)/\1/p")
  echo "batch run $run: $(awk -v r=$rps "BEGIN{printf \"%.0f\", r*1000}") tokens/s ($rps requests/s of 1,000), p99 $(echo "$out" | awk "/ 99%/{print \$2}"), non-2xx ${bad:-0}"
done
# What the batches wrote reaches the disk before the single tokens run (not timed; the statistics
# stay as the batches left them): otherwise the first single run measures the kernel writing back
# the pages of a million rows, which stalls the writes of PostgreSQL for hundreds of milliseconds.
psql -q -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U "$POSTGRES_USER" "$POSTGRES_DATABASE" -c "CHECKPOINT"
sync
# MARQUEE_BENCH_ANALYZE=1: fresh statistics before the single tokens, as autoanalyze gives them some
# time after a bulk load; without it the singles run on the statistics the batches left.
if [ -n "${MARQUEE_BENCH_ANALYZE:-}" ]; then
  psql -q -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U "$POSTGRES_USER" "$POSTGRES_DATABASE" -c "ANALYZE"
  echo "analyzed before the single tokens"
fi
for run in $(seq "$RUNS"); do
  out=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$HERE/api/register-single.lua" $BASE)
  rps=$(echo "$out" | sed -n "s/^Requests\/sec: *\([0-9.]*\)/\1/p")
  bad=$(echo "$out" | sed -n "s/.*Non-2xx or 3xx responses: *\([0-9]*\)/\1/p")
  echo "single run $run: $rps requests/s, p50 $(echo "$out" | awk "/ 50%/{print \$2}"), p99 $(echo "$out" | awk "/ 99%/{print \$2}"), non-2xx ${bad:-0}"
done
echo "load after: $(cut -d" " -f1-3 /proc/loadavg)"
'
