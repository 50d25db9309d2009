#!/usr/bin/env bash
# The transport benchmark: h2load's ceiling and MarqueeAPNS side by side against the same sink, in one
# run, with the same request shape (200,000 Live Activity start pushes, 1000 rotating 64-hex tokens,
# liveactivity headers, a bearer JWT, start-body.json), one connection, 100 concurrent streams.
#   Benchmarks/run-transport.sh [N=200000] [STREAMS=100]
# Prints both rates, their ratio and the machine load. Builds the benchmark in release mode.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=${BENCH_DIR:-/work/shared/bench}
N=${1:-200000}; M=${2:-100}
"$BENCH/apns-sink.sh" start >/dev/null
trap '"$BENCH/apns-sink.sh" stop' EXIT
( cd "$HERE" && swift build -c release --product MarqueeTransportBenchmark >/dev/null )
BIN="$HERE/.build/release/MarqueeTransportBenchmark"
echo "load before: $(uptime | sed 's/.*load average: //')"
ceiling=$("$BENCH/h2load-ceiling.sh" "$N" "$M" 8443 | tee /dev/stderr | sed -n 's/^h2load_req_per_s //p')
ours=$("$BIN" --count "$N" --warmup 20000 --streams "$M" --connections 1 --ca "$("$BENCH/apns-sink.sh" ca)" \
    --body "$BENCH/start-body.json" | tee /dev/stderr | sed -n 's/^marquee_req_per_s //p')
echo "load after: $(uptime | sed 's/.*load average: //')"
echo "h2load_req_per_s $ceiling"
echo "marquee_req_per_s $ours"
awk -v a="$ours" -v b="$ceiling" 'BEGIN { printf "ratio %.3f\n", a / b }'
