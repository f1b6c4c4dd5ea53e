#!/usr/bin/env bash
# Fleet benchmark (issue 14): durable intake with the PostgreSQL store against SQLite on this
# machine, and the takeover time after kill -9 of a node.
#
#   sqlite-1  one `pulsegate serve`, SQLite in its data directory (the embedded default)
#   pg-1      one `pulsegate serve --store postgres://…`
#   pg-3      three `pulsegate serve` on the same store, one wrk per node (CONNECTIONS/3 each)
#   takeover  three nodes forwarding to a `pulsegate ingest`; load through node 0, kill -9 of
#             node 0, time until the fleet's outbox is empty (the survivors took its identities
#             over: lease STORE_LEASE_MS, rescan RESCAN_MS) and how many rows were left then
#
# Intake scenarios run with forwarding paused (--upstream is a closed port), as bench-gateway.sh's
# "paused": intake alone. Every request has a unique Apsio-Batch-Id, so every 200 is a new commit
# (dedup row + outbox rows); PostgreSQL runs with its defaults (fsync on, synchronous_commit on).
# The cluster is a throwaway one (initdb as the postgres user in a temporary folder, a free port).
#
# Environment: DURATION (s, 15), CONNECTIONS (32), THREADS (2), BIN (folder with a built pulsegate;
# default the release build), SCENARIOS (default "sqlite-1 pg-1 pg-3 takeover"), STORE_LEASE_MS
# (2000), RESCAN_MS (500), KEEP_LOG (a file to copy the gateways' log to at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
SCENARIOS=${SCENARIOS:-sqlite-1 pg-1 pg-3 takeover}
STORE_LEASE_MS=${STORE_LEASE_MS:-2000}
RESCAN_MS=${RESCAN_MS:-500}
PAYLOAD=docs/examples/otlp-logs.json
bench_build pulsegate

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL server binaries missing (apt-get install postgresql)" >&2; exit 1; }
DATA=$(mktemp -d /tmp/pulsegate-bench-fleet.XXXXXX)
chmod 0755 "$DATA"
PIDS=()
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  as_postgres "$PG_BIN/pg_ctl" -D "$DATA/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  if [ -n "${KEEP_LOG:-}" ]; then cp "$DATA/gateway.log" "$KEEP_LOG" || true; fi
  rm -rf "$DATA"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PG_PORT=$(free_port)
mkdir -p "$DATA/pg"
[ "$(id -u)" -eq 0 ] && chown postgres: "$DATA/pg"
as_postgres "$PG_BIN/initdb" -D "$DATA/pg/data" -A trust -U postgres -E UTF8 >/dev/null
cat >>"$DATA/pg/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$DATA/pg'
max_connections = 100
CONF
as_postgres "$PG_BIN/pg_ctl" -D "$DATA/pg/data" -l "$DATA/pg/server.log" -w start >/dev/null
psql_run() { "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -X -q -A -t "$@"; }
echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT" \
  "(fsync $(psql_run -c 'SHOW fsync'), synchronous_commit $(psql_run -c 'SHOW synchronous_commit'))" >&2

closed_port=$(free_port)
database=0
# start_nodes COUNT STORE(0|1) UPSTREAM: starts COUNT gateways; sets NODE_PIDS and NODE_PORTS.
start_nodes() {
  local count=$1 store=$2 upstream=$3 i port url=""
  NODE_PIDS=()
  NODE_PORTS=()
  if [ "$store" = 1 ]; then
    database=$((database + 1))
    psql_run -c "CREATE DATABASE bench$database"
    url="postgresql://postgres@127.0.0.1:$PG_PORT/bench$database"
  fi
  cat >"$DATA/gateway.json" <<CONF
{"logLevel":"warning","storeLeaseMs":$STORE_LEASE_MS,
 "forwarding":{"rescanIntervalMs":$RESCAN_MS,"backoffBaseMs":50,"backoffMaxMs":1000}}
CONF
  for i in $(seq 0 $((count - 1))); do
    port=$(free_port)
    local args=(serve --listen "127.0.0.1:$port" --upstream "$upstream" --data-dir "$DATA/node-$database-$i-$RANDOM"
      --config "$DATA/gateway.json")
    if [ -n "$url" ]; then args+=(--store "$url"); fi
    "$BIN/pulsegate" "${args[@]}" 2>>"$DATA/gateway.log" &
    PIDS+=($!)
    NODE_PIDS+=($!)
    NODE_PORTS+=("$port")
    wait_for "http://127.0.0.1:$port/livez"
  done
}
stop_nodes() {
  local pid
  for pid in "${NODE_PIDS[@]}"; do stop "$pid"; done
}

# intake NAME COUNT STORE: wrk against every node at once (CONNECTIONS split between them).
intake() {
  local name=$1 count=$2 store=$3 per i
  start_nodes "$count" "$store" "127.0.0.1:$closed_port"
  per=$((CONNECTIONS / count))
  for port in "${NODE_PORTS[@]}"; do
    wrk -t1 -c"$per" -d2s -s scripts/bench/gateway.lua "http://127.0.0.1:$port/v1/logs" -- "$PAYLOAD" >/dev/null
  done
  echo "== $name: $count node(s), $per connections each, ${DURATION}s (load average $(loadavg))" >&2
  local wrk_pids=()
  for i in "${!NODE_PORTS[@]}"; do
    wrk -t"$THREADS" -c"$per" -d"${DURATION}s" -s scripts/bench/gateway.lua \
      "http://127.0.0.1:${NODE_PORTS[$i]}/v1/logs" -- "$PAYLOAD" >"$DATA/wrk-$i.out" &
    wrk_pids+=($!)
  done
  for pid in "${wrk_pids[@]}"; do wait "$pid"; done
  local rps=0 p99=0 non2xx=0 value
  for i in "${!NODE_PORTS[@]}"; do
    value=$(wrk_value "$(cat "$DATA/wrk-$i.out")" durable_rps); rps=$(awk -v a="$rps" -v b="$value" 'BEGIN{print a+b}')
    value=$(wrk_value "$(cat "$DATA/wrk-$i.out")" p99_ms); p99=$(awk -v a="$p99" -v b="$value" 'BEGIN{print (b>a)?b:a}')
    value=$(wrk_value "$(cat "$DATA/wrk-$i.out")" non_2xx); non2xx=$((non2xx + ${value:-0}))
  done
  local groups=""
  if [ "$store" = 1 ]; then
    groups=$(curl -fsS "http://127.0.0.1:${NODE_PORTS[0]}/metrics" | awk '
      $1 == "pulsegate_commit_jobs_per_fsync_sum" { s = $2 } $1 == "pulsegate_commit_jobs_per_fsync_count" { c = $2 }
      END { if (c > 0) printf " jobs_per_commit_node0=%.1f", s / c }')
  fi
  printf 'RESULT %-9s durable_rps=%s p99_ms=%s non_2xx=%s%s\n' "$name" "$rps" "$p99" "$non2xx" "$groups"
  stop_nodes
}

takeover() {
  local ingest_port
  "$BIN/pulsegate" ingest --listen 127.0.0.1:0 --admin 127.0.0.1:0 --data-dir "$DATA/ingest" >"$DATA/ingest.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do grep -q "admin on http" "$DATA/ingest.log" && break; sleep 0.1; done
  ingest_port=$(sed -nE 's|.*listening on 127\.0\.0\.1:([0-9]+) \(msgtrans\).*|\1|p' "$DATA/ingest.log" | sed -n 1p)
  start_nodes 3 1 "127.0.0.1:$ingest_port"
  echo "== takeover: load on node 0 (64 identities, 3 s), then kill -9 of node 0" >&2
  wrk -t1 -c16 -d3s -s scripts/bench/gateway.lua "http://127.0.0.1:${NODE_PORTS[0]}/v1/logs" -- "$PAYLOAD" \
    application/json 64 >/dev/null
  local left_at_kill
  left_at_kill=$(psql_run -d "bench$database" -c "SELECT count(*) FROM outbox")
  kill -KILL "${NODE_PIDS[0]}"
  local killed
  killed=$(now_seconds)
  local left=$left_at_kill
  while [ "$left" -gt 0 ]; do
    sleep 0.05
    left=$(psql_run -d "bench$database" -c "SELECT count(*) FROM outbox")
    if awk -v a="$(now_seconds)" -v b="$killed" 'BEGIN { exit !(a - b > 120) }'; then break; fi
  done
  local seconds
  seconds=$(awk -v a="$(now_seconds)" -v b="$killed" 'BEGIN { printf "%.2f", a - b }')
  printf 'RESULT takeover  rows_in_outbox_at_kill=%s outbox_empty_after_s=%s left=%s (lease %s ms, rescan %s ms)\n' \
    "$left_at_kill" "$seconds" "$left" "$STORE_LEASE_MS" "$RESCAN_MS"
  NODE_PIDS=("${NODE_PIDS[@]:1}")
  stop_nodes
}

for scenario in $SCENARIOS; do
  case $scenario in
    sqlite-1) intake sqlite-1 1 0 ;;
    pg-1) intake pg-1 1 1 ;;
    pg-3) intake pg-3 3 1 ;;
    takeover) takeover ;;
    *) echo "unknown scenario $scenario" >&2; exit 2 ;;
  esac
done
