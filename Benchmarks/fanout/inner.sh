#!/usr/bin/env bash
# run-fanout.sh's part inside scripts/with-postgres (POSTGRES_* set).
set -euo pipefail
source "$HERE/serve-postgres.sh"
PY="$HERE/fanout/fanout.py"
# MARQUEE_BENCH_PG_STATEMENTS=1 (run-fanout.sh starts PostgreSQL with pg_stat_statements then): after
# each fan-out, the statements PostgreSQL spent the most time executing during it, to stderr.
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

# What PostgreSQL wrote to its WAL during a fan-out: bytes, full-page images (each page's first change
# after a checkpoint writes the whole 8 KiB page) and checkpoints begun (timed or requested; counted in
# pg_stat_checkpointer from PostgreSQL 17, in pg_stat_bgwriter before it).
wal_counters() {
  local checkpoints="(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
  [ "$(psql_bench -At -c "SHOW server_version_num")" -ge 170000 ] &&
    checkpoints="(SELECT num_timed + num_requested FROM pg_stat_checkpointer)"
  psql_bench -At -F' ' -c "SELECT wal_bytes, wal_fpi, $checkpoints FROM pg_stat_wal"
}

start_serve
setup_app
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
  # The cores the reference leaves idle (idle and I/O wait, /proc/stat, over the three runs with
  # their warm-ups): beside the fan-out's `idle_cores`, what two processes passing requests to each
  # other leave of the machine when neither is short of work.
  stat_before=$(head -1 /proc/stat)
  ceilings=$(for _ in 1 2 3; do APNS_SINK_DIR="$SINK_DIR" "$SHARED/h2load-ceiling.sh" 200000 100 8443 | sed -n 's/^h2load_req_per_s //p'; done)
  ceiling_idle=$(printf '%s\n%s\n' "$stat_before" "$(head -1 /proc/stat)" |
    awk '{ total = 0; for (i = 2; i <= 9; i++) total += $i; idle[NR] = $5 + $6; all[NR] = total }
         END { printf "%.2f", '"$(nproc)"' * (idle[2] - idle[1]) / (all[2] - all[1]) }')
  ceiling=$(echo "$ceilings" | sort -g | sed -n 2p)
  echo "ceilings (h2load req/s): $(echo $ceilings), median $ceiling; idle cores over them $ceiling_idle"
  for fan_out in $fan_outs; do
    variant=${fan_out%%:*}; variables=${fan_out#*:}
    if [ "$variant" = small ] && [ -z "${MARQUEE_BENCH_VARIANTS:-}" ]; then type=SmallMatch; n=$SMALL; else type=BigMatch; n=$TOKENS; fi
    (
      trap '[ -z "$SERVER" ] || stop_serve' EXIT
      for assignment in ${variables//,/ }; do [ "$assignment" = - ] || export "${assignment?}"; done
      start_serve
      key="ev-$variant-$run"
      put_event "$key" "$type"
      # Each fan-out starts on a settled database (not timed): otherwise autovacuum takes up the bulk
      # load's tokens and the previous runs' ledger rows in the middle of the next run.
      settle
      load1=$(cut -d' ' -f1 /proc/loadavg)
      statements_reset
      wal_before=$(wal_counters)
      result=$(python3 "$PY" start $BASE "$PUB" "$key" "$SERVER")
      wal_after=$(wal_counters)
      statements_report
      stop_serve
      echo "$result" | jq -c --arg variant "$variant" --arg variables "$variables" --arg run "$run" --arg ceiling "$ceiling" --arg ceiling_idle "$ceiling_idle" --arg load "$load1" --arg n "$n" \
        --arg wal_before "$wal_before" --arg wal_after "$wal_after" \
        '{variant: $variant, variables: $variables, run: ($run|tonumber), tokens: ($n|tonumber), state, seconds, rate, ceiling: ($ceiling|tonumber), ceiling_idle_cores: ($ceiling_idle|tonumber),
          ratio: ((.rate / ($ceiling|tonumber)) * 1000 | round / 1000), total, accepted, failed,
          hwm_mib: ((.hwm_kib / 1024) * 10 | round / 10), rss_max_sampled_mib: ((.rss_max_sampled_kib / 1024) * 10 | round / 10),
          rss_before_mib: ((.rss_before_kib / 1024) * 10 | round / 10), rss_series_mib, sent_series, cpu, load_before: ($load|tonumber),
          wal: ([($wal_before | split(" ") | map(tonumber)), ($wal_after | split(" ") | map(tonumber))]
                | {mib: (((.[1][0] - .[0][0]) / 1048576) | round), full_page_images: (.[1][1] - .[0][1]), checkpoints: (.[1][2] - .[0][2])}),
          load_after: '"$(cut -d' ' -f1 /proc/loadavg)"'}'
    )
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# What the buffer pool has to hold: the tables a fan-out reads and writes, with their indexes.
echo "postgres sizes: $(psql_bench -At -c "SELECT string_agg(relname || ' ' || pg_size_pretty(pg_total_relation_size(oid)) || ' (' || reltuples::bigint || ' rows)', ', ' ORDER BY relname) FROM pg_class WHERE relname IN ('start_ledger', 'push_to_start_tokens')")"
echo "start ledger's indexes: $(psql_bench -At -c "SELECT string_agg(relname || ' ' || pg_size_pretty(pg_relation_size(oid)), ', ' ORDER BY relname) FROM pg_class WHERE relname IN ('start_ledger_pkey', 'start_ledger_token')")"
grep -iE "error|warning" "$WORK/serve.log" | sort | uniq -c | sort -rn | head -5 >&2 || true
