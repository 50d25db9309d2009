#!/usr/bin/env bash
# The transport benchmark: h2load's ceiling and MarqueeAPNS side by side against the same sink, in one
# run, with the same request shape (N Live Activity start pushes of start-body.json, 1000 rotating
# 64-hex tokens, liveactivity headers, a bearer JWT), one connection, M concurrent streams, TLS.
#   Benchmarks/run-transport.sh [N=200000] [M=100] [RUNS=3] [CONNECTIONS=1] [SOURCE=sequence]
# With CONNECTIONS > 1 the client spreads the same M streams over that many connections (M/CONNECTIONS
# each), as APNs asks providers to; h2load keeps its one connection with M streams.
# SOURCE=pages sends through the asynchronous page source (`send(pages:)`, pages of PAGE_SIZE=1000
# pushes) instead of a synchronous sequence.
# Alternates the two RUNS times and prints each pair, each ratio, the median ratio and the machine
# load. Builds the sender in release mode.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
N=${1:-200000}; M=${2:-100}; RUNS=${3:-3}; CONNECTIONS=${4:-1}; SOURCE=${5:-sequence}; PAGE_SIZE=${PAGE_SIZE:-1000}

source "$HERE/lib.sh"

(cd "$HERE" && swift build -c release --product MarqueeTransportBenchmark >/dev/null)
BIN="$HERE/.build/release/MarqueeTransportBenchmark"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
ratios=()
for run in $(seq "$RUNS"); do
  ceiling=$(APNS_SINK_DIR="$SINK_DIR" "$SHARED/h2load-ceiling.sh" "$N" "$M" 8443 | sed -n 's/^h2load_req_per_s //p')
  ours=$("$BIN" --count "$N" --warmup 20000 --streams $((M / CONNECTIONS)) --connections "$CONNECTIONS" --ca "$SINK_DIR/cert.pem" \
      --body "$SHARED/start-body.json" --source "$SOURCE" --page-size "$PAGE_SIZE" | tee /dev/stderr | sed -n 's/^marquee_req_per_s //p')
  ratio=$(awk -v a="$ours" -v b="$ceiling" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio")
  echo "run $run: h2load_req_per_s $ceiling marquee_req_per_s $ours ratio $ratio (load $(cut -d' ' -f1 /proc/loadavg))"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median ratio $(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
