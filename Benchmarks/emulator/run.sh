#!/usr/bin/env bash
# The emulator's throughput against the nginx ceiling, side by side in one run.
#
# h2load sends the ceiling's load (../../shared/bench/h2load-ceiling.sh: N Live Activity start pushes
# of start-body.json, 1 connection, M concurrent streams, 1000 rotating device tokens, the same
# headers) to `marquee emulator`. The only differences from the ceiling's command line are what a
# real APNs needs: a provider token the emulator verifies (made with Apple's openssl recipe from
# the emulator's demo key) and device tokens the emulator issued (1000 virtual iOS 18 devices with
# a push-to-start token for MatchAttributes). Every push goes through the emulator's full path:
# token check, header rules, JSON parsing, the device's start rules and the push history.
#
#   Benchmarks/emulator/run.sh [N=200000] [M=100]
# Prints the rates and ratios for TLS (emulator vs nginx :8443) and h2c (emulator vs nginx :8080).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SHARED=${MARQUEE_SHARED_BENCH:-$(cd "$ROOT/.." && pwd)/shared/bench}
[ -d "$SHARED" ] || { echo "$0: no ../shared/bench beside the repository; set MARQUEE_SHARED_BENCH" >&2; exit 2; }
N=${1:-200000}; M=${2:-100}
BIN="$ROOT/.build/release/marquee"
(cd "$ROOT" && swift build -c release --product marquee >/dev/null)

WORK=$(mktemp -d)
EMULATOR_PID=""
SINK_DIR=""
cleanup() {
  [ -n "$EMULATOR_PID" ] && kill "$EMULATOR_PID" 2>/dev/null && wait "$EMULATOR_PID" 2>/dev/null || true
  [ -n "$SINK_DIR" ] && APNS_SINK_DIR="$SINK_DIR" "$SHARED/apns-sink.sh" stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# The nginx sink: reuse one that is already up, else start a private one and stop it afterwards.
if ! curl -s -o /dev/null --http2-prior-knowledge http://127.0.0.1:8080/ 2>/dev/null; then
  SINK_DIR="$WORK/sink"
  APNS_SINK_DIR="$SINK_DIR" "$SHARED/apns-sink.sh" start >/dev/null
fi

"$BIN" emulator --state-dir "$WORK/state" --bundle-id com.example.app --team-id DEF123GHIJ \
  --push-to-start-budget 0 --priority-budget 0 --history 16 > "$WORK/emulator.log" 2>&1 &
EMULATOR_PID=$!
for _ in $(seq 100); do [ -s "$WORK/state/emulator.json" ] && break; sleep 0.1; done
read -r TLS_URL H2C_URL INSPECT KEY_ID P8 < <(python3 - "$WORK/state/emulator.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
e = s["environments"]["sandbox"]
print(e["push"], e["pushH2C"], s["inspectionURL"], s["demoKey"]["keyID"], s["demoKey"]["p8Path"])
PY
)

# 1000 virtual devices; their push-to-start tokens replace the ceiling's random tokens.
python3 - "$INSPECT" "$WORK" "$TLS_URL" "$H2C_URL" <<'PY'
import http.client, json, sys, urllib.parse
inspect, work, tls, h2c = sys.argv[1:5]
u = urllib.parse.urlparse(inspect)
conn = http.client.HTTPConnection(u.hostname, u.port)
tokens = []
for _ in range(1000):
    body = json.dumps({"bundleID": "com.example.app", "iOSVersion": "18.0", "pushToStartAttributesTypes": ["MatchAttributes"]})
    conn.request("POST", "/v1/sandbox/devices", body, {"content-type": "application/json"})
    tokens.append(json.loads(conn.getresponse().read())["pushToStartTokens"]["MatchAttributes"])
for name, base in (("tls", tls), ("h2c", h2c)):
    with open(f"{work}/uris-{name}.txt", "w") as f:
        f.writelines(f"{base}/3/device/{t}\n" for t in tokens)
PY

# The provider token, made as Apple's command-line guide makes it.
JWT_HEADER=$(printf '{ "alg": "ES256", "kid": "%s" }' "$KEY_ID" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
JWT_CLAIMS=$(printf '{ "iss": "%s", "iat": %d }' "DEF123GHIJ" "$(date +%s)" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
JWT_SIGNATURE=$(printf '%s' "$JWT_HEADER.$JWT_CLAIMS" | openssl dgst -binary -sha256 -sign "$P8" | openssl base64 -e -A | tr -- '+/' '-_' | tr -d =)
JWT="$JWT_HEADER.$JWT_CLAIMS.$JWT_SIGNATURE"
H=(-H "authorization: bearer $JWT" -H "apns-push-type: liveactivity"
   -H "apns-topic: com.example.app.push-type.liveactivity" -H "apns-priority: 10"
   -H "apns-expiration: 0" -H "content-type: application/json")

emulator_rate() { # $1: tls|h2c
  h2load -n 20000 -c 1 -m "$M" -t 1 -d "$SHARED/start-body.json" "${H[@]}" -i "$WORK/uris-$1.txt" >/dev/null
  local out
  out=$(h2load -n "$N" -c 1 -m "$M" -t 1 -d "$SHARED/start-body.json" "${H[@]}" -i "$WORK/uris-$1.txt")
  echo "$out" | grep -E "^(requests|status codes)" | sed "s/^/  emulator $1: /" >&2
  echo "$out" | sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p'
}
nginx_rate() { # $1: port
  "$SHARED/h2load-ceiling.sh" "$N" "$M" "$1" | sed -n 's/^h2load_req_per_s //p'
}

for transport in tls h2c; do
  port=8443; [ "$transport" = h2c ] && port=8080
  ceiling=$(nginx_rate "$port")
  emulator=$(emulator_rate "$transport")
  ratio=$(python3 -c "print(f'{$emulator / $ceiling:.2f}')")
  echo "$transport: nginx ${ceiling} req/s, emulator ${emulator} req/s, ratio ${ratio}"
done
curl -s "$INSPECT/v1/summary" | python3 -c "import json,sys; c=json.load(sys.stdin)['counters']; print('emulator counters: accepted', c['devicePushesAccepted'], 'rejected', c['rejected'])"
