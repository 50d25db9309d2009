#!/usr/bin/env bash
# The transport benchmark: h2load's ceiling and MarqueeAPNS side by side against the same sink, in one
# run, with the same request shape (N Live Activity start pushes of start-body.json, 1000 rotating
# 64-hex tokens, liveactivity headers, a bearer JWT), one connection, M concurrent streams, TLS.
#   Benchmarks/run-transport.sh [N=200000] [M=100]
# Prints both rates, their ratio and the machine load. Builds the sender in release mode.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${MARQUEE_SHARED_BENCH:-$(cd "$HERE/../../.." && pwd)/shared/bench}
[ -d "$SHARED" ] || SHARED=/work/shared/bench
N=${1:-200000}; M=${2:-100}

# The nginx sink: reuse one that is already up (its files in the default place), else start a private
# one and stop it afterwards.
SINK_DIR=${APNS_SINK_DIR:-/tmp/apns-sink}
STARTED=""
if ! curl -s -o /dev/null --http2-prior-knowledge http://127.0.0.1:8080/ 2>/dev/null; then
  SINK_DIR=$(mktemp -d)/sink
  APNS_SINK_DIR="$SINK_DIR" "$SHARED/apns-sink.sh" start >/dev/null
  STARTED=1
fi
cleanup() { [ -n "$STARTED" ] && APNS_SINK_DIR="$SINK_DIR" "$SHARED/apns-sink.sh" stop >/dev/null 2>&1 || true; }
trap cleanup EXIT

(cd "$HERE" && swift build -c release --product MarqueeTransportBenchmark >/dev/null)
BIN="$HERE/.build/release/MarqueeTransportBenchmark"

echo "load before: $(uptime | sed 's/.*load average: //')"
ceiling=$(APNS_SINK_DIR="$SINK_DIR" "$SHARED/h2load-ceiling.sh" "$N" "$M" 8443 | tee /dev/stderr | sed -n 's/^h2load_req_per_s //p')
ours=$("$BIN" --count "$N" --warmup 20000 --streams "$M" --connections 1 --ca "$SINK_DIR/cert.pem" \
    --body "$SHARED/start-body.json" | tee /dev/stderr | sed -n 's/^marquee_req_per_s //p')
echo "load after: $(uptime | sed 's/.*load average: //')"
echo "h2load_req_per_s $ceiling"
echo "marquee_req_per_s $ours"
awk -v a="$ours" -v b="$ceiling" 'BEGIN { printf "ratio %.3f\n", a / b }'
