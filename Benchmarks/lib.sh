# Sourced by the run-*.sh scripts that send to the nginx APNs sink of ../shared/bench.
# Sets SHARED (the shared bench folder) and SINK_DIR (the running sink's files: its cert.pem), and
# starts a private sink when none is up, stopping it when the script exits.

SHARED=${MARQUEE_SHARED_BENCH:-$(cd "$HERE/../.." && pwd)/shared/bench}
[ -d "$SHARED" ] || { echo "$0: no ../shared/bench beside the repository; set MARQUEE_SHARED_BENCH" >&2; exit 2; }

# Reuse a sink that is already up (its files in the default place), else start a private one.
SINK_DIR=${APNS_SINK_DIR:-/tmp/apns-sink}
SINK_STARTED=""
if ! curl -s -o /dev/null --http2-prior-knowledge http://127.0.0.1:8080/ 2>/dev/null; then
  SINK_DIR=$(mktemp -d)/sink
  APNS_SINK_DIR="$SINK_DIR" "$SHARED/apns-sink.sh" start >/dev/null
  SINK_STARTED=1
fi
stop_private_sink() { [ -n "$SINK_STARTED" ] && APNS_SINK_DIR="$SINK_DIR" "$SHARED/apns-sink.sh" stop >/dev/null 2>&1 || true; }
trap stop_private_sink EXIT
