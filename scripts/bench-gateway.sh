#!/usr/bin/env bash
# Gateway benchmark. Starts `pulsegate serve` (release build) on loopback, runs wrk with the
# 20-record OTLP logs payload of docs/examples/otlp-logs.json (as JSON, and the same request as
# OTLP/protobuf) at 32 connections, each request with a unique Apsio-Batch-Id (every 200 is a new
# durable write: dedup row + outbox rows committed and fsync'd before the answer), and prints
# durable requests/s, p50/p99 latency, the server's CPU time per request and the jobs per fsync
# of its group commit (pulsegate_commit_jobs_per_fsync in /metrics, over the measured run). In the same run it
# measures the peer a user would otherwise run — Rotel, the Rust OTLP collector (PyPI `rotel`,
# blackhole exporter, nothing durable), on the same wrk load and bodies — and the raw SQLite
# group-commit ceiling of this machine (`pulsegate-bench sqlite-ceiling`: the gateway's
# statements — dedup lookup, dedup row, outbox row with an identity and a payload of the size the
# gateway stored — from 32 concurrent tasks through SQLiteExecutor.commit, nothing else), and
# prints the ratios to both.
#
# Scenarios (SCENARIOS, space-separated, default "rotel paused embedded"):
#   rotel     Rotel's OTLP/HTTP receiver with the blackhole exporter (the peer; run first).
#   embedded  `pulsegate serve` without --upstream: the reference ingest server runs in the same
#             process and forwarding competes with intake for the 2 cores and the disk (the
#             issue's setup, and what the README runs).
#   paused    forwarding paused: --upstream points at a closed loopback port, so rows stay in the
#             outbox (the forwarder only retries with backoff). Intake alone: the figure compared
#             with Rotel.
#   external  the ingest server in a separate `pulsegate ingest` process (its CPU is not counted
#             in the gateway's CPU per request).
# Each scenario runs once per media type (MEDIA, default "json protobuf").
#
# Environment: DURATION (s, default 15), CONNECTIONS (32), THREADS (wrk threads, 2), PORT (14318),
# SCENARIOS, MEDIA, BIN (a folder holding pulsegate and pulsegate-bench: skips the release build),
# UPSTREAM (HOST:PORT; overrides the scenarios' upstream), SCRATCH (SwiftPM
# scratch path), CEILING (1; 0 skips the ceiling), GATHER_US and GATHER_JOBS (the gateway's
# commitGatherMicroseconds and commitGatherJobs; unset keeps its defaults, GATHER_US=0 turns gathering off). Rotel and the protobuf classes come from the
# pinned venv of scripts/bench/venv.sh (.build/venv-bench, created on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
PORT=${PORT:-14318}
SCRATCH=${SCRATCH:-.build}
SCENARIOS=${SCENARIOS:-rotel paused embedded}
MEDIA=${MEDIA:-json protobuf}
CEILING=${CEILING:-1}
JSON_PAYLOAD=docs/examples/otlp-logs.json

bench_build pulsegate pulsegate-bench
source scripts/bench/venv.sh

DATA=$(mktemp -d /tmp/pulsegate-bench.XXXXXX)
PROTOBUF_PAYLOAD=$DATA/otlp-logs.pb
"$BENCH_PYTHON" scripts/bench/otlp-json-to-protobuf.py logs "$JSON_PAYLOAD" "$PROTOBUF_PAYLOAD"
GATEWAY_PID=
INGEST_PID=
cleanup() {
  stop "$GATEWAY_PID"
  stop "$INGEST_PID"
  rm -rf "$DATA"
}
trap cleanup EXIT

# "jobs groups" of the gateway's group commit so far (pulsegate_commit_jobs_per_fsync _sum and _count).
commit_groups() {
  curl -fsS "http://127.0.0.1:$PORT/metrics" |
    awk '$1 == "pulsegate_commit_jobs_per_fsync_sum" { s = $2 } $1 == "pulsegate_commit_jobs_per_fsync_count" { c = $2 }
      END { print s + 0, c + 0 }'
}

SUMMARY=()
STORED_BYTES=
run_scenario() {
  local scenario=$1 media=$2 dir="$DATA/$1-$2" upstream= payload content_type
  case "$media" in
    json) payload=$JSON_PAYLOAD content_type=application/json ;;
    protobuf) payload=$PROTOBUF_PAYLOAD content_type=application/x-protobuf ;;
    *) echo "unknown media type $media (json, protobuf)" >&2; exit 2 ;;
  esac
  mkdir -p "$dir"
  case "$scenario" in
    rotel) ;;
    embedded) ;;
    paused) upstream=127.0.0.1:9 ;;
    external)
      local ingest_port=$((PORT + 1))
      "$BIN/pulsegate" ingest --listen "127.0.0.1:$ingest_port" --data-dir "$dir/ingest" >"$dir/ingest.log" 2>&1 &
      INGEST_PID=$!
      sleep 1
      upstream=127.0.0.1:$ingest_port
      ;;
    *) echo "unknown scenario $scenario" >&2; exit 2 ;;
  esac
  if [ "$scenario" = rotel ]; then
    # The server's process under measurement is Rotel's; its gRPC receiver goes to a spare port.
    start_rotel "$PORT" "$dir"
    GATEWAY_PID=$ROTEL_PID
  else
    if [ -n "${UPSTREAM:-}" ]; then upstream=$UPSTREAM; fi
    local args=(serve --listen "127.0.0.1:$PORT" --data-dir "$dir/gateway")
    if [ -n "${GATHER_US:-}${GATHER_JOBS:-}" ]; then
      local settings=()
      if [ -n "${GATHER_US:-}" ]; then settings+=("\"commitGatherMicroseconds\": $GATHER_US"); fi
      if [ -n "${GATHER_JOBS:-}" ]; then settings+=("\"commitGatherJobs\": $GATHER_JOBS"); fi
      (IFS=,; echo "{${settings[*]}}") >"$dir/config.json"
      args+=(--config "$dir/config.json")
    fi
    if [ -n "$upstream" ]; then args+=(--upstream "$upstream"); fi
    "$BIN/pulsegate" "${args[@]}" 2>"$dir/gateway.log" &
    GATEWAY_PID=$!
    wait_for "http://127.0.0.1:$PORT/livez"
  fi

  echo "== $scenario/$media: warm-up (2 s)" >&2
  wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s scripts/bench/gateway.lua "http://127.0.0.1:$PORT/v1/logs" \
    -- "$payload" "$content_type" >/dev/null
  local load_before cpu_before cpu_after wrk_out fsync_before= fsync_after=
  load_before=$(loadavg)
  if [ "$scenario" != rotel ]; then fsync_before=$(commit_groups); fi
  cpu_before=$(cpu_ticks "$GATEWAY_PID")
  echo "== $scenario/$media: wrk $CONNECTIONS connections, $THREADS threads, ${DURATION}s, $(wc -c <"$payload") byte payload" \
    "(load average $load_before)" >&2
  wrk_out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s scripts/bench/gateway.lua \
    "http://127.0.0.1:$PORT/v1/logs" -- "$payload" "$content_type")
  cpu_after=$(cpu_ticks "$GATEWAY_PID")
  if [ "$scenario" != rotel ]; then fsync_after=$(commit_groups); fi
  echo "$wrk_out" >&2
  local rps p50 p99 requests non2xx cpu_us forwarded jobs_per_fsync=-
  rps=$(wrk_value "$wrk_out" durable_rps)
  p50=$(wrk_value "$wrk_out" p50_ms)
  p99=$(wrk_value "$wrk_out" p99_ms)
  requests=$(wrk_value "$wrk_out" requests)
  non2xx=$(wrk_value "$wrk_out" non_2xx)
  cpu_us=$(cpu_us_per $((cpu_after - cpu_before)) "$requests")
  forwarded=-
  if [ -n "$fsync_before" ] && [ -n "$fsync_after" ]; then
    # Both are "jobs groups": the histogram's _sum and _count.
    jobs_per_fsync=$(echo "$fsync_before $fsync_after" |
      awk '{ g = $4 - $2; if (g > 0) printf "%.1f", ($3 - $1) / g; else print "-" }')
  fi
  if [ "$scenario" != rotel ]; then
    forwarded=$(metric "http://127.0.0.1:$PORT/metrics" 'pulsegate_forward_total{kind="events",result="ok"}')
  fi
  if [ "$scenario" != rotel ] && [ -z "$STORED_BYTES" ] && command -v sqlite3 >/dev/null; then
    STORED_BYTES=$(sqlite3 "$dir/gateway/gateway.sqlite" \
      "SELECT CAST(avg(length(payload)) AS INTEGER) FROM outbox" 2>/dev/null || true)
  fi
  stop "$GATEWAY_PID"
  GATEWAY_PID=
  stop "$INGEST_PID"
  INGEST_PID=
  SUMMARY+=("$(printf '%-18s %9s %8s %8s %10s %10s %8s %9s  %s' "$scenario/$media" "$rps" "$p50" "$p99" "$cpu_us" \
    "${forwarded:-0}" "$non2xx" "$jobs_per_fsync" "$load_before")")
  RPS["$scenario/$media"]=$rps
  LAST_RPS=$rps
  if [ "$scenario" = embedded ] && [ "$media" = json ]; then EMBEDDED_RPS=$rps; fi
}

declare -A RPS
EMBEDDED_RPS=
LAST_RPS=
for scenario in $SCENARIOS; do
  for media in $MEDIA; do run_scenario "$scenario" "$media"; done
done

CEILING_VALUE=
if [ "$CEILING" = 1 ]; then
  STORED_BYTES=${STORED_BYTES:-9000}
  echo "== sqlite-ceiling: $CONNECTIONS tasks, ${STORED_BYTES}-byte stored payloads, ${DURATION}s (load average $(loadavg))" >&2
  CEILING_OUT=$("$BIN/pulsegate-bench" sqlite-ceiling --seconds "$DURATION" --concurrency "$CONNECTIONS" \
    --payload-bytes "$STORED_BYTES" --dir "$DATA/ceiling")
  echo "$CEILING_OUT" >&2
  CEILING_VALUE=$(echo "$CEILING_OUT" | awk '/^sqlite-ceiling:/ { print $2 }')
fi

echo
printf '%-18s %9s %8s %8s %10s %10s %8s %9s  %s\n' scenario/media "durable/s" "p50 ms" "p99 ms" "CPU us/req" forwarded \
  non-2xx jobs/fsync "load average (1/5/15 min) before"
for line in "${SUMMARY[@]}"; do echo "$line"; done
if [ -n "$CEILING_VALUE" ]; then
  echo "sqlite ceiling: $CEILING_VALUE commits/s"
  HEADLINE=${EMBEDDED_RPS:-$LAST_RPS}
  awk -v rps="$HEADLINE" -v ceiling="$CEILING_VALUE" \
    'BEGIN { if (ceiling > 0) printf "ratio to ceiling: %.2f (%s durable requests/s)\n", rps / ceiling, rps }'
fi
for scenario in $SCENARIOS; do
  [ "$scenario" = rotel ] && continue
  for media in $MEDIA; do
    peer=${RPS["rotel/$media"]:-}
    [ -n "$peer" ] || continue
    awk -v name="$scenario/$media" -v rps="${RPS["$scenario/$media"]}" -v peer="$peer" \
      'BEGIN { if (peer > 0) printf "ratio to Rotel, %s: %.2f (%s vs %s requests/s)\n", name, rps / peer, rps, peer }'
  done
done
echo "CPU us/req: the server process's user+system CPU per request (embedded: includes the ingest server;"
echo "rotel: Rotel's, with nothing durable)."
echo "forwarded: Pulse batches the forwarder delivered during the run."
echo "jobs/fsync: group-commit jobs (intake requests, forwarder acknowledgements) per fsync during the run."
