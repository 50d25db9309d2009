#!/usr/bin/env bash
# run-late-joiners.sh's part inside scripts/with-postgres (POSTGRES_* set).
set -euo pipefail
source "$HERE/serve-postgres.sh"

start_serve
setup_app
python3 "$HERE/fanout/fanout.py" load $BASE "$DEV" LateMatch "$TOKENS" c1c1c1c1
stop_serve

echo "tuning: $(env | grep -E '^MARQUEE_(JOBS|APNS|LATE)' | grep -vE 'URL|CA_FILE|TARGET' | tr '\n' ' ')"
echo "postgres: $(psql_bench -At -c "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit')")"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) cores"
for run in $(seq "$RUNS"); do
  (
    trap '[ -z "$SERVER" ] || stop_serve' EXIT
    start_serve
    key="ev-late-$run"; prefix=$(printf '1a7e%04x' "$run")
    put_event "$key" LateMatch
    settle
    load1=$(cut -d' ' -f1 /proc/loadavg)
    result=$(python3 "$HERE/latejoin/latejoin.py" run $BASE "$PUB" "$DEV" "$key" LateMatch "$LATE" "$RATE" "$prefix")
    registered=$(echo "$result" | jq '.registrations | length')
    # Each late joiner's start: the ledger entry of this event for its token (started_at: APNs' answer).
    ledger() {
      psql_bench -At -F' ' -c "SELECT t.token, extract(epoch FROM l.started_at) FROM start_ledger l
        JOIN push_to_start_tokens t ON t.id = l.token_id JOIN events e ON e.id = l.event_id
        WHERE e.external_key = '$key' AND t.token LIKE '$prefix%'"
    }
    for _ in $(seq 600); do [ "$(ledger | wc -l)" -ge "$registered" ] && break; sleep 0.1; done
    echo "$result" | jq -c --arg ledger "$(ledger)" --arg run "$run" --arg load "$load1" '
      ($ledger | split("\n") | map(select(length > 0) | split(" ") | {key: .[0], value: (.[1] | tonumber)}) | from_entries) as $started
      | ([.registrations[] | select($started[.token]) | ($started[.token] - .registered) * 1000] | sort) as $ms
      | def pct(p): if ($ms | length) == 0 then null else $ms[((($ms | length) - 1) * p) | floor] | . * 10 | round / 10 end;
      {run: ($run | tonumber), start_seconds: .seconds, start_accepted: .accepted, late_registered: (.registrations | length),
       late_started: ($ms | length), latency_ms: {p50: pct(0.5), p99: pct(0.99), max: pct(1)}, load_before: ($load | tonumber),
       load_after: '"$(cut -d' ' -f1 /proc/loadavg)"'}'
  )
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -iE "error|warning" "$WORK/serve.log" | sort | uniq -c | sort -rn | head -5 >&2 || true
