#!/usr/bin/env bash
# A system-wide CPU profile of one fan-out, taken while it runs: waits for the Nth `marquee serve`
# to start (run-fanout.sh starts one to load the tokens, then one per fan-out), then for it to be
# busy, and records `perf record -a -g` for SECONDS. Start it before run-fanout.sh, e.g.
#   Benchmarks/perf-attach.sh 3 8 /tmp/perf.data & Benchmarks/run-fanout.sh 300000 1 20000
#   perf report -i /tmp/perf.data --no-children --sort comm --stdio -g none
# With MODE=server (a fourth argument) it records that server alone with DWARF call graphs, which
# reach through libswiftCore (built without frame pointers) to the callers of swift_retain & co.
set -euo pipefail
N=${1:-3}; SECONDS_TO_RECORD=${2:-8}; OUT=${3:-/tmp/perf.data}; MODE=${4:-system}
seen=" "; n=0
while true; do
  for pid in $(pgrep -f "marquee serve" || true); do
    case "$seen" in *" $pid "*) continue ;; esac
    seen="$seen$pid "; n=$((n + 1))
    [ "$n" -eq "$N" ] || continue
    # Busy: more than 20 ticks of CPU in half a second.
    previous=0
    while true; do
      ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || exit 1
      [ "$previous" -gt 0 ] && [ $((ticks - previous)) -gt 20 ] && break
      previous=$ticks; sleep 0.5
    done
    sleep 1
    if [ "$MODE" = server ]; then
      exec perf record -F 249 --call-graph dwarf,16384 -p "$pid" -o "$OUT" -- sleep "$SECONDS_TO_RECORD"
    fi
    exec perf record -F 299 -a -g -o "$OUT" -- sleep "$SECONDS_TO_RECORD"
  done
  sleep 0.2
done
