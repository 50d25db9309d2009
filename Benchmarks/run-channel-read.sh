#!/usr/bin/env bash
# The channel-ID read (`GET /v1/events/{key}/channels/{env}` with an app key) on a release
# `marquee serve` with its in-process APNs emulator, on SQLite and on a throwaway PostgreSQL 15:
# the full answer (200), the same with the answer's ETag in If-None-Match (304), and
# `GET /health/live` (the HTTP stack alone), each driven by wrk from another process on loopback.
# The reference, in the same run: nginx (worker_processes auto, so on the same cores) serving the
# same JSON at the same path as a static file, driven the same way; each path's median is given
# as its ratio to nginx's median.
#   Benchmarks/run-channel-read.sh [DURATION=20s] [CONNECTIONS=32] [RUNS=3] [BACKENDS="sqlite postgres"]
# MARQUEE_BIN=path uses that binary instead of building the release one.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DURATION=${1:-20s}; CONNECTIONS=${2:-32}; RUNS=${3:-3}; BACKENDS=${4:-sqlite postgres}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
if [ -z "${MARQUEE_BIN:-}" ]; then
  (cd "$ROOT" && swift build -c release --product marquee >&2)
  MARQUEE_BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/marquee"
fi
export BIN="$MARQUEE_BIN" DURATION CONNECTIONS RUNS BACKENDS HERE ROOT
exec "$ROOT/scripts/with-postgres" bash -c '
set -euo pipefail
WORK=$(mktemp -d); SERVER=""
trap "[ -n \"\$SERVER\" ] && kill \$SERVER 2>/dev/null; wait 2>/dev/null; rm -rf $WORK" EXIT
export MARQUEE_SECRETS_MASTER_KEYS="bench:$(head -c32 /dev/urandom | base64)"
H=(-H "Content-Type: application/json")
measure() {  # label, lua script or "", extra environment
  local label=$1 script=$2; shift 2
  for run in $(seq "$RUNS"); do
    out=$(env "$@" wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency ${script:+-s "$script"} "$URL")
    rps=$(echo "$out" | sed -n "s/^Requests\/sec: *\([0-9.]*\)/\1/p")
    bad=$(echo "$out" | sed -n "s/.*Non-2xx or 3xx responses: *\([0-9]*\)/\1/p")
    echo "  $label run $run: $rps requests/s, p50 $(echo "$out" | awk "/ 50%/{print \$2}"), p99 $(echo "$out" | awk "/ 99%/{print \$2}"), non-2xx/3xx ${bad:-0}"
    echo "$rps" >> "$WORK/rates/$(echo "$label" | tr -c "A-Za-z0-9\n" _)"
  done
}
median() { sort -g "$WORK/rates/$(echo "$1" | tr -c "A-Za-z0-9\n" _)" | awk "{ r[NR] = \$1 } END { print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }"; }
mkdir -p "$WORK/rates"
echo "load before: $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) cores; wrk -t2 -c$CONNECTIONS -d$DURATION"
port=18500
for backend in $BACKENDS; do
  port=$((port + 1)); BASE=http://127.0.0.1:$port; D="$WORK/$backend"; mkdir -p "$D"
  DB=(); [ "$backend" = postgres ] && DB=(--database-url "postgres://$POSTGRES_USER:$POSTGRES_PASSWORD@$POSTGRES_HOST:$POSTGRES_PORT/$POSTGRES_DATABASE?sslmode=disable")
  "$BIN" serve "${DB[@]}" --port $port --data-dir "$D/data" --sql-dir "$ROOT/sql" --log-level warning > "$D/serve.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 300); do curl -sf "$BASE/health/ready" >/dev/null 2>&1 && break; sleep 0.1; done
  ADMIN=$(grep -o "mq_[A-Za-z0-9_-]*" "$D/serve.log" | head -1)
  APP=$(curl -sf -XPOST $BASE/v1/apps -H "Authorization: Bearer $ADMIN" "${H[@]}" \
    -d "{\"name\":\"Bench\",\"bundleID\":\"com.example.bench\",\"teamID\":\"BENCH12345\",\"environments\":[\"sandbox\"]}" | jq -r .id)
  # A signing key, so that the app reaches the emulator and the event gets its channel.
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$D/key.p8" 2>/dev/null
  jq -n --rawfile pem "$D/key.p8" "{keyID:\"BENCHKEY03\", privateKey:\$pem}" |
    curl -sf -XPUT $BASE/v1/apps/$APP/signing-key -H "Authorization: Bearer $ADMIN" "${H[@]}" -d @- >/dev/null
  PUB=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" "${H[@]}" -d "{\"role\":\"publisher\"}" | jq -r .key)
  export APP_KEY=$(curl -sf -XPOST $BASE/v1/apps/$APP/api-keys -H "Authorization: Bearer $ADMIN" "${H[@]}" -d "{\"role\":\"app\"}" | jq -r .key)
  export EVENT=kick-off
  curl -sf -XPUT $BASE/v1/events/$EVENT -H "Authorization: Bearer $PUB" "${H[@]}" \
    -d "{\"title\":\"Bench\",\"attributesType\":\"MatchAttributes\",\"environments\":[\"sandbox\"],\"plannedStart\":\"2026-11-28T15:00:00Z\",\"plannedEnd\":\"2026-11-28T17:00:00Z\"}" >/dev/null
  TAG=$(curl -sf -D - -o /dev/null $BASE/v1/events/$EVENT/channels/sandbox -H "Authorization: Bearer $APP_KEY" | sed -n "s/^[Ee][Tt]ag: *\(.*\)\r$/\1/p")
  [ -n "$TAG" ] || { echo "setup failed on $backend: no ETag" >&2; cat "$D/serve.log" >&2; exit 1; }
  curl -sf $BASE/v1/events/$EVENT/channels/sandbox -H "Authorization: Bearer $APP_KEY" > "$WORK/answer.json"
  echo "$backend:"
  URL=$BASE; measure "$backend channel read (200)" "$HERE/api/channel-read.lua" ETAG=
  URL=$BASE; measure "$backend channel read with If-None-Match (304)" "$HERE/api/channel-read.lua" ETAG="$TAG"
  URL=$BASE/health/live; measure "$backend GET /health/live" ""
  kill $SERVER; wait $SERVER 2>/dev/null || true; SERVER=""
done
# The reference: nginx answering the same JSON (the last backend answer) at the same path.
command -v nginx >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; }
NGINX="$WORK/nginx"; mkdir -p "$NGINX/tmp"
chmod a+rx "$WORK"; chmod a+r "$WORK/answer.json"   # nginx reads it as its worker user
cat > "$NGINX/nginx.conf" <<CONF
worker_processes auto;
daemon on;
pid nginx.pid;
error_log error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path tmp/client_body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/fastcgi;
    uwsgi_temp_path tmp/uwsgi; scgi_temp_path tmp/scgi;
    keepalive_requests 100000000;
    server {
        listen 127.0.0.1:18599;
        location = /v1/events/kick-off/channels/sandbox {
            default_type application/json;
            add_header Cache-Control "max-age=60";
            alias $WORK/answer.json;
        }
    }
}
CONF
nginx -p "$NGINX/" -c nginx.conf
trap "[ -s \"$NGINX/nginx.pid\" ] && kill \$(cat \"$NGINX/nginx.pid\"); wait 2>/dev/null; rm -rf $WORK" EXIT
echo "nginx, the same JSON:"
URL=http://127.0.0.1:18599; measure "nginx channel read (200)" "$HERE/api/channel-read.lua" ETAG=
reference=$(median "nginx channel read (200)")
echo "medians, as ratios to the nginx median of $reference requests/s:"
for backend in $BACKENDS; do
  for path in "channel read (200)" "channel read with If-None-Match (304)" "GET /health/live"; do
    rate=$(median "$backend $path")
    echo "  $backend $path: $rate requests/s, $(awk -v a="$rate" -v b="$reference" "BEGIN { printf \"%.3f\", a / b }") of nginx"
  done
done
echo "load after: $(cut -d" " -f1-3 /proc/loadavg)"
'
