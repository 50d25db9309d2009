#!/usr/bin/env bash
# Two `marquee serve` builds (or settings) side by side on one throwaway PostgreSQL 15, driven in
# turn by wrk -t2 -c32 from another process on loopback, their order alternating run by run: the
# rate, p50 and p99 of each run, and the server's own CPU per request (utime + stime of its process
# over the run, over the requests answered), steadier on a shared host than the rate.
#   run-api-ab.sh BIN_A BIN_B [DURATION=10s] [RUNS=4] [single|batch]
# ENV_A / ENV_B: variables for one side only, e.g. ENV_B="MARQUEE_HTTP_EVENT_LOOP_ANSWERS=false".
# Both servers start on the same database; 5 s of batches of 1,000 warm them before the first run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BIN_A=$(realpath "$1"); BIN_B=$(realpath "$2"); DURATION=${3:-10s}; RUNS=${4:-4}; KIND=${5:-single}
case "$KIND" in single) LUA=register-single.lua ;; batch) LUA=register-batch.lua ;; *) echo "single or batch" >&2; exit 2 ;; esac
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
export BIN_A BIN_B DURATION RUNS HERE ROOT LUA ENV_A="${ENV_A:-}" ENV_B="${ENV_B:-}"
exec "$ROOT/scripts/with-postgres" bash -c '
set -euo pipefail
WORK=$(mktemp -d)
URL="postgres://$POSTGRES_USER:$POSTGRES_PASSWORD@$POSTGRES_HOST:$POSTGRES_PORT/$POSTGRES_DATABASE?sslmode=disable"
MASTER="bench:$(head -c32 /dev/urandom | base64)"
serve() { # serve BIN PORT LOG ENV
  env MARQUEE_SECRETS_MASTER_KEYS="$MASTER" $4 "$1" serve --database-url "$URL" --port "$2" --data-dir "$WORK" \
    --sql-dir "$ROOT/sql" --log-level warning > "$WORK/$3" 2>&1 &
}
serve "$BIN_A" 18481 a.log "$ENV_A"; A=$!
for _ in $(seq 100); do grep -q "^    mq_" "$WORK/a.log" 2>/dev/null && break; sleep 0.2; done
serve "$BIN_B" 18482 b.log "$ENV_B"; B=$!
trap "kill $A $B 2>/dev/null; wait $A $B 2>/dev/null; rm -rf $WORK" EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:18482/health/live >/dev/null 2>&1 && break; sleep 0.2; done
ADMIN=$(grep -o "mq_[A-Za-z0-9_-]*" "$WORK/a.log" | head -1)
BASE=http://127.0.0.1:18481
APP=$(curl -sf -XPOST $BASE/v1/apps -H "Authorization: Bearer $ADMIN" -H "Content-Type: application/json" \
  -d "{\"name\":\"Bench\",\"bundleID\":\"com.example.bench\",\"teamID\":\"BENCH12345\",\"environments\":[\"sandbox\"]}" | sed -n "s/.*\"id\" *: *\"\([^\"]*\)\".*/\1/p")
export APP_KEY=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" -H "Content-Type: application/json" \
  -d "{\"role\":\"app\"}" | sed -n "s/.*\"key\" *: *\"\([^\"]*\)\".*/\1/p")
[ -n "$APP_KEY" ] || { echo "setup failed: no app key" >&2; cat "$WORK/a.log" >&2; exit 1; }
BATCH=1000 wrk -t2 -c32 -d5s -s "$HERE/api/register-batch.lua" http://127.0.0.1:18481 >/dev/null
BATCH=1000 wrk -t2 -c32 -d5s -s "$HERE/api/register-batch.lua" http://127.0.0.1:18482 >/dev/null
echo "load before: $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) cores; wrk -t2 -c32 -d$DURATION, $LUA"
for run in $(seq "$RUNS"); do
  order="A B"; [ $((run % 2)) -eq 0 ] && order="B A"
  for side in $order; do
    if [ $side = A ]; then pid=$A; port=18481; else pid=$B; port=18482; fi
    before=$(awk "{print \$14 + \$15}" /proc/$pid/stat)
    out=$(BATCH=1000 wrk -t2 -c32 -d"$DURATION" --latency -s "$HERE/api/$LUA" http://127.0.0.1:$port)
    after=$(awk "{print \$14 + \$15}" /proc/$pid/stat)
    n=$(echo "$out" | sed -n "s/^ *\([0-9]*\) requests in.*/\1/p")
    rps=$(echo "$out" | sed -n "s/^Requests\/sec: *\([0-9.]*\)/\1/p")
    bad=$(echo "$out" | sed -n "s/.*Non-2xx or 3xx responses: *\([0-9]*\)/\1/p")
    cpu=$(awk -v t=$((after - before)) -v n="${n:-0}" -v hz="$(getconf CLK_TCK)" "BEGIN{ if (n > 0) printf \"%.0f\", t / hz * 1e6 / n; else print \"-\" }")
    echo "$side run $run: $rps requests/s, p50 $(echo "$out" | awk "/ 50%/{print \$2}"), p99 $(echo "$out" | awk "/ 99%/{print \$2}"), server CPU $cpu us/request, non-2xx ${bad:-0}"
  done
done
echo "load after: $(cut -d" " -f1-3 /proc/loadavg)"
'
