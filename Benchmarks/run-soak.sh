#!/usr/bin/env bash
# The match-day soak (issue 35, part 5): a compressed match day against two `marquee serve` replicas
# on a durable PostgreSQL with the APNs emulator, sampled each minute and plotted. Benchmarks/soak/
# match_day.py's header says what it runs and what fails it; RELIABILITY.md, "The match-day soak".
#   Benchmarks/run-soak.sh [--minutes 30] [--binary PATH] [--scale 1] [--out docs/soak/match-day] ...
#   Benchmarks/run-soak.sh --ci     # 2 minutes, scaled down, the debug binary: what scripts/test runs
# Without --binary it builds and runs the release binary (--ci: the debug one, as built).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
arguments=("$@")
has() { local a; for a in "${arguments[@]}"; do case "$a" in "$1" | "$1"=*) return 0 ;; esac; done; return 1; }
if ! has --binary && ! has --help && ! has -h; then
  if has --ci; then
    arguments+=(--binary "$ROOT/.build/debug/marquee" --build "debug at $(git -C "$ROOT" rev-parse --short HEAD)")
  else
    (cd "$ROOT" && swift build -c release --product marquee >&2)
    arguments+=(--binary "$(cd "$ROOT" && swift build -c release --show-bin-path)/marquee" --build "release at $(git -C "$ROOT" rev-parse --short HEAD)")
  fi
fi
exec env PYTHONUNBUFFERED=1 python3 "$HERE/soak/match_day.py" "${arguments[@]}"
