#!/usr/bin/env bash
# run-broadcast.sh's part inside scripts/with-postgres (POSTGRES_* set).
set -euo pipefail
WORK=$(mktemp -d)
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
PCT="$HERE/broadcast/percentiles.py"
export MARQUEE_SECRETS_MASTER_KEYS="bench:$(head -c32 /dev/urandom | base64)"
H=(-H "Content-Type: application/json")
b64url() { openssl base64 -e -A | tr -- '+/' '-_' | tr -d =; }
echo '{"event":"update","contentState":{"homeTeamScore":1,"awayTeamScore":0,"period":"1st half","clock":"23:00","status":"live"}}' > "$WORK/marquee-body.json"

# Committed transactions in the benchmark's database (each statement outside a transaction is one):
# how many round trips to PostgreSQL a broadcast costs, at least.
commits() {
  [ "$backend" = postgres ] || { echo 0; return; }
  PGPASSWORD="$POSTGRES_PASSWORD" psql -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U "$POSTGRES_USER" -d "$POSTGRES_DATABASE" -Atc \
    "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
}

# The server's own timers over the measured calls: the engine's part of a broadcast (store reads
# and writes plus the APNs request) and the APNs request alone, as means; and how many of the
# engine's parts took over 2 and over 5 ms (its histogram's buckets), which says whether a tail of
# the calls' latencies is in the engine or around it (the HTTP stack, the hops to and from it).
timers() {
  curl -sf "$BASE/metrics" | awk '
    /^marquee_broadcast_latency_seconds_(sum|count)/ { split($1, n, "_seconds_"); v["engine_" n[2]] = $2 }
    /^marquee_apns_request_duration_seconds_(sum|count)\{kind="broadcast"\}/ { split($1, n, "_seconds_"); sub(/\{.*/, "", n[2]); v["apns_" n[2]] = $2 }
    /^marquee_broadcast_latency_seconds_bucket\{le="0.002"\}/ { v["within2"] = $2 }
    /^marquee_broadcast_latency_seconds_bucket\{le="0.005"\}/ { v["within5"] = $2 }
    END { printf "%s %s %s %s %s %s\n", v["engine_sum"], v["engine_count"], v["apns_sum"], v["apns_count"], v["within2"], v["within5"] }'
}
timer_means() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    split(a, x, " "); split(b, y, " "); n = y[2] - x[2]
    printf "engine mean %.2f ms, of which the APNs request %.2f ms; engine over 2 ms %d, over 5 ms %d of %d", (y[1] - x[1]) / n * 1000,
      (y[3] - x[3]) / (y[4] - x[4]) * 1000, n - (y[5] - x[5]), n - (y[6] - x[6]), n }'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) cores; $BROADCASTS broadcasts per run, one connection, one at a time"
port=18490
for backend in $BACKENDS; do
  port=$((port + 1)); BASE=http://127.0.0.1:$port; D="$WORK/$backend"; mkdir -p "$D"
  DB=(); [ "$backend" = postgres ] && DB=(--database-url "postgres://$POSTGRES_USER:$POSTGRES_PASSWORD@$POSTGRES_HOST:$POSTGRES_PORT/$POSTGRES_DATABASE?sslmode=disable")
  "$BIN" serve "${DB[@]}" --port $port --data-dir "$D/data" --sql-dir "$ROOT/sql" --log-level warning > "$D/serve.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 300); do curl -sf "$BASE/health/ready" >/dev/null 2>&1 && break; sleep 0.1; done
  ADMIN=$(grep -o "mq_[A-Za-z0-9_-]*" "$D/serve.log" | head -1)
  INSPECT=$(grep -o "inspection API: http://[0-9.:]*" "$D/serve.log" | sed 's/.*: //')
  PUSH_URL=$(curl -sf "$INSPECT/v1/summary" | jq -r '.listeners["sandbox-push-tls"]')
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$D/key.p8" 2>/dev/null
  APP=$(curl -sf -XPOST $BASE/v1/apps -H "Authorization: Bearer $ADMIN" "${H[@]}" \
    -d '{"name":"Bench","bundleID":"com.example.bench","teamID":"BENCH12345","environments":["sandbox"]}' | jq -r .id)
  jq -n --rawfile pem "$D/key.p8" '{keyID:"BENCHKEY02", privateKey:$pem}' |
    curl -sf -XPUT $BASE/v1/apps/$APP/signing-key -H "Authorization: Bearer $ADMIN" "${H[@]}" -d @- >/dev/null
  PUB=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" "${H[@]}" -d '{"role":"publisher"}' | jq -r .key)
  # The reference's provider token, signed with the app's key as Apple's command-line guide does.
  JWT_HEADER=$(printf '{ "alg": "ES256", "kid": "BENCHKEY02" }' | b64url)
  JWT_CLAIMS=$(printf '{ "iss": "BENCH12345", "iat": %d }' "$(date +%s)" | b64url)
  JWT="$JWT_HEADER.$JWT_CLAIMS.$(printf '%s' "$JWT_HEADER.$JWT_CLAIMS" | openssl dgst -binary -sha256 -sign "$D/key.p8" | b64url)"
  echo "$backend: emulator push listener $PUSH_URL"
  for run in $(seq "$RUNS"); do
    key="bc-$backend-$run"
    curl -sf -XPUT $BASE/v1/events/$key -H "Authorization: Bearer $PUB" "${H[@]}" \
      -d "{\"title\":\"Bench $run\",\"attributesType\":\"MatchAttributes\",\"environments\":[\"sandbox\"],\"plannedStart\":\"2026-11-28T15:00:00Z\",\"plannedEnd\":\"2026-11-28T17:00:00Z\"}" > "$D/event.json"
    CHANNEL=$(curl -sf $BASE/v1/events/$key/channels/sandbox -H "Authorization: Bearer $PUB" | jq -r '.channelID // .channels[0].channelID // .id')
    now=$(date +%s)
    printf '{"aps":{"timestamp":%d,"event":"update","content-state":{"homeTeamScore":1,"awayTeamScore":0,"period":"1st half","clock":"23:00","status":"live"}}}' "$now" > "$D/apns-body.json"
    REF=(-H "authorization: bearer $JWT" -H "apns-push-type: liveactivity" -H "apns-channel-id: $CHANNEL"
         -H "apns-priority: 5" -H "apns-expiration: $((now + 3600))" -H "content-type: application/json")
    MQ=(-H "Authorization: Bearer $PUB" -H "Content-Type: application/json")
    # Warm-up (connections, caches), then the measured runs: the reference first, then Marquee.
    h2load -n 200 -c 1 -m 1 -t 1 --h1 -d "$WORK/marquee-body.json" "${MQ[@]}" $BASE/v1/events/$key/broadcasts >/dev/null
    h2load -n 200 -c 1 -m 1 -t 1 -d "$D/apns-body.json" "${REF[@]}" $PUSH_URL/4/broadcasts/apps/com.example.bench >/dev/null
    l0=$(cut -d' ' -f1 /proc/loadavg)
    rm -f "$D/ref.log" "$D/mq.log"  # h2load appends to a log file
    h2load -n "$BROADCASTS" -c 1 -m 1 -t 1 -d "$D/apns-body.json" "${REF[@]}" --log-file="$D/ref.log" \
      $PUSH_URL/4/broadcasts/apps/com.example.bench > "$D/ref.out"
    commits_before=$(commits); timers_before=$(timers)
    h2load -n "$BROADCASTS" -c 1 -m 1 -t 1 --h1 -d "$WORK/marquee-body.json" "${MQ[@]}" --log-file="$D/mq.log" \
      $BASE/v1/events/$key/broadcasts > "$D/mq.out"
    commits_after=$(commits); timers_after=$(timers)
    echo "$backend run $run (load $l0 → $(cut -d' ' -f1 /proc/loadavg)):"
    echo "  emulator direct:   $(python3 "$PCT" "$D/ref.log")  $(sed -n 's/^finished in \([^,]*\), \([0-9.]*\) req\/s.*/\2 req\/s/p' "$D/ref.out")"
    echo "  marquee broadcast: $(python3 "$PCT" "$D/mq.log")  $(sed -n 's/^finished in \([^,]*\), \([0-9.]*\) req\/s.*/\2 req\/s/p' "$D/mq.out")"
    echo "  inside marquee: $(timer_means "$timers_before" "$timers_after")"
    [ "$backend" = postgres ] && echo "  PostgreSQL transactions per broadcast: $(awk -v a="$commits_before" -v b="$commits_after" -v n="$BROADCASTS" 'BEGIN { printf "%.1f", (b - a) / n }')"
    [ "$run" = 1 ] && curl -sf -XPOST $BASE/v1/events/$key/broadcasts "${MQ[@]}" -d @"$WORK/marquee-body.json" | jq -c '.results[0] | {status, priority, downgraded}'
  done
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
