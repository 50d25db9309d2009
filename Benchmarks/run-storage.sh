#!/usr/bin/env bash
# Storage benchmarks against a throwaway PostgreSQL 15 (scripts/with-postgres): bulk upsert of
# push-to-start tokens, streaming 100,000 vs 1,000,000 tokens to show that memory stays flat, and
# the cost of one statement's round trip through the store against pgbench's.
# Release build. Results go to stdout; BENCHMARKS.md records them with the machine's load.
set -euo pipefail
cd "$(dirname "$0")"
# SwiftPM can keep the file list of the path dependency (..) from an earlier build; a fresh build
# description picks up files added to the main package since.
rm -f .build/release.yaml .build/*/release/description.json
swift build -c release --product MarqueeStorageBenchmark >&2
BIN="$(swift build -c release --show-bin-path)/MarqueeStorageBenchmark"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) cores"
../scripts/with-postgres "$BIN" upsert --backend postgres --tokens 200000 --batch 10000
../scripts/with-postgres "$BIN" upsert --backend postgres --tokens 200000 --batch 1000
../scripts/with-postgres "$BIN" stream --backend postgres --tokens 100000 --page 1000
../scripts/with-postgres "$BIN" stream --backend postgres --tokens 1000000 --page 1000
# One store read at a time through PostgresNIO, against pgbench's `SELECT 1` round trip on the
# same cluster (extended protocol, one client): Marquee's own cost per statement.
PGBENCH=$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | head -1)
../scripts/with-postgres bash -c '"$0" roundtrip --backend postgres --tokens 5000
  [ -n "$1" ] || exit 0
  echo "SELECT 1;" > "${TMPDIR:-/tmp}/marquee-select1.sql"
  PGPASSWORD="$POSTGRES_PASSWORD" "$1" -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U "$POSTGRES_USER" -n -c 1 -t 5000 -M extended \
    -f "${TMPDIR:-/tmp}/marquee-select1.sql" "$POSTGRES_DATABASE" 2>&1 | sed -n "s/^latency average = /pgbench SELECT 1 round trip: /p"' "$BIN" "$PGBENCH"
if [ "${MARQUEE_BENCH_SQLITE:-1}" = 1 ]; then
  "$BIN" upsert --backend sqlite --tokens 200000 --batch 10000
  "$BIN" stream --backend sqlite --tokens 100000 --page 1000
  "$BIN" stream --backend sqlite --tokens 1000000 --page 1000
fi
