#!/usr/bin/env bash
# Benchmarks the reference ingest server (release build): batches/s and events/s for 64-event
# zstd batches over N concurrent connections, then server memory at 10,000 idle connections.
#
#   scripts/bench-ingest.sh [CONNECTIONS...]      (default: 1 8 32)
#   IDLE_CONNECTIONS=10000 BATCHES=200 scripts/bench-ingest.sh 16
#
# Uses its own scratch path so it never fights a debug build for the build lock.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH="${SCRATCH:-.build-bench}"
BATCHES="${BATCHES:-200}"
IDLE_CONNECTIONS="${IDLE_CONNECTIONS:-10000}"
swift build -c release --scratch-path "$SCRATCH" --product ingest-bench >/dev/null
BIN="$SCRATCH/release/ingest-bench"
CONNECTIONS=("$@")
if [ ${#CONNECTIONS[@]} -eq 0 ]; then CONNECTIONS=(1 8 32); fi
for n in "${CONNECTIONS[@]}"; do
    "$BIN" throughput --connections "$n" --batches "$BATCHES" --events 64 --window 8
done
if [ "$IDLE_CONNECTIONS" -gt 0 ]; then
    "$BIN" idle --connections "$IDLE_CONNECTIONS" --processes 2
fi
