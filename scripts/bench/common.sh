#!/usr/bin/env bash
# Shell functions shared by the benchmark scripts (scripts/bench-gateway.sh,
# scripts/bench-pipeline.sh). Sourced from the repository root after `set -euo pipefail`.
#
# bench_build PRODUCT...: sets BIN to the folder of the release build of these products (built into
# SCRATCH, default .build) unless BIN is already set (a debug build, or a prebuilt release).

command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }

# The load: wrk at 32 connections (2 threads) for 15 s, unless the environment says otherwise.
DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}

bench_build() {
  if [ -n "${BIN:-}" ]; then return 0; fi
  local scratch=${SCRATCH:-.build}
  local product
  echo "== building (release)" >&2
  for product in "$@"; do swift build -c release --scratch-path "$scratch" --product "$product" >&2; done
  BIN=$(swift build -c release --scratch-path "$scratch" --show-bin-path)
}

# Stops a process this script started (SIGTERM, then waits for it).
stop() {
  local pid=$1
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
# utime + stime of a process in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
TICKS=$(getconf CLK_TCK)
# Microseconds of CPU per item: cpu_us_per TICKS COUNT ("-" when COUNT is 0).
cpu_us_per() {
  awk -v t="$1" -v hz="$TICKS" -v n="$2" 'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e6 / n; else print "-" }'
}
# Monotonic seconds (with fractions).
now_seconds() { awk '{ print $1 }' /proc/uptime; }

# Waits (up to 10 s) until URL answers 2xx.
wait_for() {
  for _ in $(seq 1 100); do
    if curl -fsS "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  curl -fsS "$1" >/dev/null
}

# The value of one Prometheus sample: metric URL NAME_AND_LABELS (exact text up to the value, e.g.
# 'pulsegate_outbox_batches' or 'pulsegate_forward_total{kind="events",result="ok"}'); 0 when absent.
metric() {
  curl -fsS "$1" | awk -v key="$2" '$1 == key { value = $2 } END { print value + 0 }'
}

# Starts Rotel's OTLP/HTTP receiver on 127.0.0.1:PORT with the blackhole exporter (its gRPC
# receiver on PORT + 2) and waits until it answers; sets ROTEL_PID. Needs scripts/bench/venv.sh.
start_rotel() {
  local port=$1 dir=$2
  "$ROTEL_AGENT" start --otlp-http-endpoint "127.0.0.1:$port" --otlp-grpc-endpoint "127.0.0.1:$((port + 2))" \
    --exporter blackhole --pid-file "$dir/rotel.pid" >"$dir/rotel.log" 2>&1 &
  ROTEL_PID=$!
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' --data '{"resourceLogs":[]}' \
      "http://127.0.0.1:$port/v1/logs" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "Rotel did not answer on 127.0.0.1:$port (log: $dir/rotel.log)" >&2
  exit 1
}

# Reads one `bench.KEY VALUE` line of the wrk script's output: wrk_value OUTPUT KEY.
wrk_value() { echo "$1" | awk -v key="bench.$2" '$1 == key { print $2 }'; }
