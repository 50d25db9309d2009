# Sourced inside scripts/with-postgres (POSTGRES_* set) by the benchmarks that run a release
# `marquee serve` on PostgreSQL against the nginx APNs sink (run-fanout.sh, run-late-joiners.sh).
# Needs BIN, ROOT and SINK_DIR. Starts a `marquee emulator` for channel management only (the sink
# answers POST /3/device/* alone), creates an app with its signing key, and sets:
#   WORK BASE URL  the scratch folder, the server's base URL and its database URL
#   ADMIN PUB DEV  the admin, publisher and app keys (after `start_serve` once and `setup_app`)
#   start_serve / stop_serve, psql_bench, settle (VACUUM ANALYZE + CHECKPOINT, not timed)
WORK=$(mktemp -d); PORT=${MARQUEE_BENCH_PORT:-18481}
URL="postgres://$POSTGRES_USER:$POSTGRES_PASSWORD@$POSTGRES_HOST:$POSTGRES_PORT/$POSTGRES_DATABASE?sslmode=disable"
BASE=http://127.0.0.1:$PORT
SERVER=""; EMULATOR=""
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  [ -n "$EMULATOR" ] && kill "$EMULATOR" 2>/dev/null && wait "$EMULATOR" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Channel management only: a `marquee emulator` (its demo key is the app's signing key).
"$BIN" emulator --state-dir "$WORK/emulator" --bundle-id com.example.bench --team-id BENCH12345 --key-id BENCHKEY01 \
  --history 1 > "$WORK/emulator.log" 2>&1 &
EMULATOR=$!
for _ in $(seq 100); do [ -s "$WORK/emulator/emulator.json" ] && break; sleep 0.1; done
MANAGE_SANDBOX=$(jq -r .environments.sandbox.channelManagementH2C "$WORK/emulator/emulator.json")
MANAGE_PRODUCTION=$(jq -r .environments.production.channelManagementH2C "$WORK/emulator/emulator.json")
P8=$(jq -r .demoKey.p8Path "$WORK/emulator/emulator.json")

export MARQUEE_SECRETS_MASTER_KEYS="bench:$(head -c32 /dev/urandom | base64)"
export MARQUEE_APNS_TARGET=custom MARQUEE_APNS_CA_FILE="$SINK_DIR/cert.pem"
export MARQUEE_APNS_SANDBOX_PUSH_URL=https://127.0.0.1:8443 MARQUEE_APNS_PRODUCTION_PUSH_URL=https://127.0.0.1:8443
export MARQUEE_APNS_SANDBOX_MANAGEMENT_URL="$MANAGE_SANDBOX" MARQUEE_APNS_PRODUCTION_MANAGEMENT_URL="$MANAGE_PRODUCTION"
start_serve() {
  "$BIN" serve --database-url "$URL" --port "$PORT" --data-dir "$WORK/data" --sql-dir "$ROOT/sql" --log-level warning \
    >> "$WORK/serve.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 300); do curl -sf "$BASE/health/ready" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "marquee serve did not get ready" >&2; cat "$WORK/serve.log" >&2; exit 1
}
stop_serve() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""; }
psql_bench() { PGPASSWORD="$POSTGRES_PASSWORD" psql -X -q -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U "$POSTGRES_USER" -d "$POSTGRES_DATABASE" "$@"; }
H=(-H "Content-Type: application/json")
# A settled database (not timed): the vacuum autovacuum would otherwise do in the middle of what is
# measured, and the pages it dirtied written back.
settle() { psql_bench -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null; }
# The app (bundle com.example.bench, sandbox) with the emulator's demo key, and its keys; the
# server must be up.
setup_app() {
  ADMIN=$(grep -o "mq_[A-Za-z0-9_-]*" "$WORK/serve.log" | head -1)
  APP=$(curl -sf -XPOST $BASE/v1/apps -H "Authorization: Bearer $ADMIN" "${H[@]}" \
    -d '{"name":"Bench","bundleID":"com.example.bench","teamID":"BENCH12345","environments":["sandbox"]}' | jq -r .id)
  jq -n --rawfile pem "$P8" '{keyID:"BENCHKEY01", privateKey:$pem}' |
    curl -sf -XPUT $BASE/v1/apps/$APP/signing-key -H "Authorization: Bearer $ADMIN" "${H[@]}" -d @- >/dev/null
  PUB=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" "${H[@]}" -d '{"role":"publisher"}' | jq -r .key)
  DEV=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" "${H[@]}" -d '{"role":"app"}' | jq -r .key)
  [ -n "$DEV" ] && [ "$DEV" != null ] || { echo "setup failed" >&2; cat "$WORK/serve.log" >&2; exit 1; }
}
# PUT an event of ATTRIBUTES_TYPE under KEY (sandbox).
put_event() {
  curl -sf -XPUT $BASE/v1/events/$1 -H "Authorization: Bearer $PUB" "${H[@]}" \
    -d "{\"title\":\"Bench $1\",\"attributesType\":\"$2\",\"environments\":[\"sandbox\"],\"plannedStart\":\"2026-11-28T15:00:00Z\",\"plannedEnd\":\"2026-11-28T17:00:00Z\"}" >/dev/null
}
