#!/usr/bin/env bash
# run-fanout.sh's part inside scripts/with-postgres (POSTGRES_* set).
set -euo pipefail
WORK=$(mktemp -d); PORT=${MARQUEE_BENCH_PORT:-18481}
URL="postgres://$POSTGRES_USER:$POSTGRES_PASSWORD@$POSTGRES_HOST:$POSTGRES_PORT/$POSTGRES_DATABASE?sslmode=disable"
BASE=http://127.0.0.1:$PORT
PY="$HERE/fanout/fanout.py"
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
# MARQUEE_BENCH_PG_STATEMENTS=1 (run-fanout.sh starts PostgreSQL with pg_stat_statements then): after
# each fan-out, the statements PostgreSQL spent the most time executing during it, to stderr.
psql_bench() { PGPASSWORD="$POSTGRES_PASSWORD" psql -X -q -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U "$POSTGRES_USER" -d "$POSTGRES_DATABASE" "$@"; }
statements_reset() {
  [ "${MARQUEE_BENCH_PG_STATEMENTS:-0}" = 1 ] || return 0
  psql_bench -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()" >/dev/null
}
statements_report() {
  [ "${MARQUEE_BENCH_PG_STATEMENTS:-0}" = 1 ] || return 0
  psql_bench -P pager=off -c "
    SELECT round(total_exec_time)::bigint AS total_ms, calls, round((total_exec_time / calls)::numeric, 3) AS mean_ms,
           rows, round((100 * total_exec_time / sum(total_exec_time) OVER ())::numeric, 1) AS pct,
           left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS statement
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC LIMIT 12" >&2
}
H=(-H "Content-Type: application/json")
# A settled database (not timed): the vacuum autovacuum would otherwise do in the middle of what is
# measured, and the pages it dirtied written back.
settle() { psql_bench -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null; }

start_serve
ADMIN=$(grep -o "mq_[A-Za-z0-9_-]*" "$WORK/serve.log" | head -1)
APP=$(curl -sf -XPOST $BASE/v1/apps -H "Authorization: Bearer $ADMIN" "${H[@]}" \
  -d '{"name":"Bench","bundleID":"com.example.bench","teamID":"BENCH12345","environments":["sandbox"]}' | jq -r .id)
jq -n --rawfile pem "$P8" '{keyID:"BENCHKEY01", privateKey:$pem}' |
  curl -sf -XPUT $BASE/v1/apps/$APP/signing-key -H "Authorization: Bearer $ADMIN" "${H[@]}" -d @- >/dev/null
PUB=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" "${H[@]}" -d '{"role":"publisher"}' | jq -r .key)
DEV=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" "${H[@]}" -d '{"role":"app"}' | jq -r .key)
[ -n "$DEV" ] && [ "$DEV" != null ] || { echo "setup failed" >&2; cat "$WORK/serve.log" >&2; exit 1; }
[ -n "${MARQUEE_BENCH_VARIANTS:-}" ] || python3 "$PY" load $BASE "$DEV" SmallMatch "$SMALL" 5a5a5a5a
python3 "$PY" load $BASE "$DEV" BigMatch "$TOKENS" b1b1b1b1
stop_serve

echo "tuning: $(env | grep -E '^MARQUEE_(JOBS|APNS_CONNECTIONS|APNS_STREAMS)' | tr '\n' ' ')"
echo "postgres: $(psql_bench -At -c "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'fsync', 'synchronous_commit', 'full_page_writes', 'max_wal_size')")"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) cores"
# MARQUEE_BENCH_VARIANTS="NAME:VAR=VALUE,VAR=VALUE NAME2:-" (run-fanout.sh's header): each run's
# fan-outs are then one of TOKENS per variant, in turn, each server started with its variables.
if [ -n "${MARQUEE_BENCH_VARIANTS:-}" ]; then fan_outs=$MARQUEE_BENCH_VARIANTS; else fan_outs="small:- big:-"; fi
for run in $(seq "$RUNS"); do
  # The ceiling, too, is measured on a settled database: right after a bulk load or a fan-out,
  # autovacuum works through the new rows and takes a core from h2load (ceilings of 17,000–23,000
  # req/s against 63,000–78,000 settled, the ratio then flattered), and with fsync on the
  # checkpointer then writes back what the vacuum dirtied.
  settle
  # The median of three h2load runs: on this host one run in three or four comes in at a third of
  # the others (17,000-30,000 req/s against 60,000-80,000, with nothing else busy), and a single
  # such run would make the ratio of the fan-out after it meaningless.
  ceilings=$(for _ in 1 2 3; do APNS_SINK_DIR="$SINK_DIR" "$SHARED/h2load-ceiling.sh" 200000 100 8443 | sed -n 's/^h2load_req_per_s //p'; done)
  ceiling=$(echo "$ceilings" | sort -g | sed -n 2p)
  echo "ceilings (h2load req/s): $(echo $ceilings), median $ceiling"
  for fan_out in $fan_outs; do
    variant=${fan_out%%:*}; variables=${fan_out#*:}
    if [ "$variant" = small ] && [ -z "${MARQUEE_BENCH_VARIANTS:-}" ]; then type=SmallMatch; n=$SMALL; else type=BigMatch; n=$TOKENS; fi
    (
      trap '[ -z "$SERVER" ] || stop_serve' EXIT
      for assignment in ${variables//,/ }; do [ "$assignment" = - ] || export "${assignment?}"; done
      start_serve
      key="ev-$variant-$run"
      curl -sf -XPUT $BASE/v1/events/$key -H "Authorization: Bearer $PUB" "${H[@]}" \
        -d "{\"title\":\"Bench $run\",\"attributesType\":\"$type\",\"environments\":[\"sandbox\"],\"plannedStart\":\"2026-11-28T15:00:00Z\",\"plannedEnd\":\"2026-11-28T17:00:00Z\"}" >/dev/null
      # Each fan-out starts on a settled database (not timed): otherwise autovacuum takes up the bulk
      # load's tokens and the previous runs' ledger rows in the middle of the next run.
      settle
      load1=$(cut -d' ' -f1 /proc/loadavg)
      statements_reset
      result=$(python3 "$PY" start $BASE "$PUB" "$key" "$SERVER")
      statements_report
      stop_serve
      echo "$result" | jq -c --arg variant "$variant" --arg variables "$variables" --arg run "$run" --arg ceiling "$ceiling" --arg load "$load1" --arg n "$n" \
        '{variant: $variant, variables: $variables, run: ($run|tonumber), tokens: ($n|tonumber), state, seconds, rate, ceiling: ($ceiling|tonumber),
          ratio: ((.rate / ($ceiling|tonumber)) * 1000 | round / 1000), total, accepted, failed,
          hwm_mib: ((.hwm_kib / 1024) * 10 | round / 10), rss_max_sampled_mib: ((.rss_max_sampled_kib / 1024) * 10 | round / 10),
          rss_before_mib: ((.rss_before_kib / 1024) * 10 | round / 10), rss_series_mib, sent_series, load_before: ($load|tonumber), load_after: '"$(cut -d' ' -f1 /proc/loadavg)"'}'
    )
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# What the buffer pool has to hold: the tables a fan-out reads and writes, with their indexes.
echo "postgres sizes: $(psql_bench -At -c "SELECT string_agg(relname || ' ' || pg_size_pretty(pg_total_relation_size(oid)) || ' (' || reltuples::bigint || ' rows)', ', ' ORDER BY relname) FROM pg_class WHERE relname IN ('start_ledger', 'push_to_start_tokens')")"
grep -iE "error|warning" "$WORK/serve.log" | sort | uniq -c | sort -rn | head -5 >&2 || true
