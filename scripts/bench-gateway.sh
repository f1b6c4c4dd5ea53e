#!/usr/bin/env bash
# Gateway benchmark. Starts `pulsegate serve` (release build) on loopback, runs wrk with the
# 20-record OTLP JSON logs payload of docs/examples/otlp-logs.json at 32 connections, each request
# with a unique Apsio-Batch-Id (every 200 is a new durable write: dedup row + outbox row committed
# and fsync'd before the answer), and prints durable requests/s and p50/p99 latency. In the same
# run it measures the raw SQLite group-commit ceiling of this machine (`pulsegate-bench
# sqlite-ceiling`: the same inserts with the same payload size from 32 concurrent tasks through
# SQLiteExecutor.commit, nothing else) and prints the ratio.
#
# Environment: DURATION (s, default 15), CONNECTIONS (32), THREADS (wrk threads, 2), PORT (14318),
# UPSTREAM (HOST:PORT; default: the gateway's embedded upstream), SCRATCH (SwiftPM scratch path).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
PORT=${PORT:-14318}
SCRATCH=${SCRATCH:-.build}
PAYLOAD=docs/examples/otlp-logs.json

command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }
echo "== building (release)" >&2
swift build -c release --scratch-path "$SCRATCH" --product pulsegate >&2
swift build -c release --scratch-path "$SCRATCH" --product pulsegate-bench >&2
BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)

DATA=$(mktemp -d /tmp/pulsegate-bench.XXXXXX)
GATEWAY_PID=
cleanup() {
  if [ -n "$GATEWAY_PID" ] && kill -0 "$GATEWAY_PID" 2>/dev/null; then kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; fi
  rm -rf "$DATA"
}
trap cleanup EXIT

ARGS=(serve --listen "127.0.0.1:$PORT" --data-dir "$DATA/gateway")
if [ -n "${UPSTREAM:-}" ]; then ARGS+=(--upstream "$UPSTREAM"); fi
"$BIN/pulsegate" "${ARGS[@]}" 2>"$DATA/gateway.log" &
GATEWAY_PID=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$PORT/livez" >/dev/null 2>&1; then break; fi
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$PORT/livez" >/dev/null

echo "== warm-up (2 s)" >&2
wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s scripts/bench/gateway.lua "http://127.0.0.1:$PORT/v1/logs" -- "$PAYLOAD" >/dev/null
echo "== wrk: $CONNECTIONS connections, $THREADS threads, ${DURATION}s, $(wc -c <"$PAYLOAD") byte payload" >&2
WRK_OUT=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s scripts/bench/gateway.lua \
  "http://127.0.0.1:$PORT/v1/logs" -- "$PAYLOAD")
echo "$WRK_OUT" >&2
value() { echo "$WRK_OUT" | awk -v key="bench.$1" '$1 == key { print $2 }'; }
RPS=$(value durable_rps)
P50=$(value p50_ms)
P99=$(value p99_ms)
NON2XX=$(value non_2xx)

OUTBOX_BYTES=9000
if command -v sqlite3 >/dev/null; then
  OUTBOX_BYTES=$(sqlite3 "$DATA/gateway/gateway.sqlite" "SELECT coalesce(CAST(avg(length(payload)) AS INTEGER), 9000) FROM outbox" 2>/dev/null || echo 9000)
fi
kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=

echo "== sqlite-ceiling: $CONNECTIONS tasks, ${OUTBOX_BYTES}-byte payloads, ${DURATION}s" >&2
CEILING_OUT=$("$BIN/pulsegate-bench" sqlite-ceiling --seconds "$DURATION" --concurrency "$CONNECTIONS" \
  --payload-bytes "$OUTBOX_BYTES" --dir "$DATA/ceiling")
echo "$CEILING_OUT" >&2
CEILING=$(echo "$CEILING_OUT" | awk '/^sqlite-ceiling:/ { print $2 }')

echo
echo "durable requests/s : $RPS  (non-2xx: $NON2XX)"
echo "latency p50 / p99  : ${P50} ms / ${P99} ms"
echo "sqlite ceiling     : $CEILING commits/s"
awk -v rps="$RPS" -v ceiling="$CEILING" 'BEGIN { if (ceiling > 0) printf "ratio to ceiling   : %.2f\n", rps / ceiling }'
