# A `marquee serve` for the scripts that test through a real server (scripts/console-test,
# scripts/readme-test): sourced, not run. On SQLite in a folder of its own, or on a new database
# of the PostgreSQL cluster POSTGRES_* name (with a master key of its own), on a free port of
# loopback, the APNs emulator in-process.
#   test_server_start STORE DATA_DIR [NAME=VALUE...]   sets TEST_SERVER_PID, TEST_SERVER_URL,
#                                                       TEST_SERVER_KEY (the deployment key) and
#                                                       TEST_SERVER_INSPECTION (the emulator's
#                                                       inspection API); returns 1, the log shown,
#                                                       if it did not start
#   test_server_stop
#   test_postgres_url DATABASE                          a URL of the cluster for DATABASE
#   test_postgres_create_database DATABASE

TEST_SERVER_PID=""

test_postgres_url() { echo "postgres://$POSTGRES_USER:$POSTGRES_PASSWORD@$POSTGRES_HOST:$POSTGRES_PORT/$1"; }

test_postgres_create_database() {
  PGPASSWORD="$POSTGRES_PASSWORD" "$(pg_config --bindir)/psql" -q -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U "$POSTGRES_USER" \
    -d "$POSTGRES_DATABASE" -c "CREATE DATABASE $1" >/dev/null
}

test_server_start() {
  local store="$1" data="$2"
  shift 2
  local port
  port="$("$ROOT/scripts/free-port")"
  local env_args=(MARQUEE_HTTP_PORT="$port" MARQUEE_DATA_DIR="$data" MARQUEE_LOG_FORMAT=text "$@")
  if [ "$store" = postgres ]; then
    local db="marquee_test_$RANDOM$RANDOM"
    test_postgres_create_database "$db"
    env_args+=(MARQUEE_DATABASE_URL="$(test_postgres_url "$db")" MARQUEE_SECRETS_MASTER_KEYS="test:$(openssl rand -base64 32)")
  fi
  mkdir -p "$data"
  (cd "$data" && exec env "${env_args[@]}" "$MARQUEE" serve >"$data/serve.log" 2>&1) &
  TEST_SERVER_PID=$!
  TEST_SERVER_URL="http://127.0.0.1:$port"
  TEST_SERVER_KEY=""
  for _ in $(seq 600); do
    TEST_SERVER_KEY="$(grep -o 'mq_[A-Za-z0-9_-]*' "$data/serve.log" | head -1 || true)"
    if [ -n "$TEST_SERVER_KEY" ] && curl -sf "$TEST_SERVER_URL/health/ready" >/dev/null 2>&1; then break; fi
    kill -0 "$TEST_SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  TEST_SERVER_INSPECTION="$(grep -o 'Emulator inspection API: http://[0-9.:]*' "$data/serve.log" | head -1 | cut -d' ' -f4 || true)"
  if [ -z "$TEST_SERVER_KEY" ]; then
    echo "marquee serve did not start on $store:" >&2
    cat "$data/serve.log" >&2
    test_server_stop
    return 1
  fi
}

test_server_stop() {
  if [ -n "$TEST_SERVER_PID" ] && kill -0 "$TEST_SERVER_PID" 2>/dev/null; then
    kill -TERM "$TEST_SERVER_PID" 2>/dev/null || true
    wait "$TEST_SERVER_PID" 2>/dev/null || true
  fi
  TEST_SERVER_PID=""
}
