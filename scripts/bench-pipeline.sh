#!/usr/bin/env bash
# Pipeline benchmark (issue 12, "Forwarding and ingest at wire speed"): intake, forwarding and the
# upstream's ingest in one run on this machine, against Rotel's intake on the same wrk load.
#
# Load: wrk at CONNECTIONS (32) connections with the 20-record OTLP/JSON logs body of
# docs/examples/otlp-logs.json, each request a new batch (unique Apsio-Batch-Id and unique
# log.record.uid values), rotated over IDENTITIES (1,000) bodies that differ only in `device.id` /
# `app.installation.id` (scripts/bench/gateway.lua builds them at init). One request of this body
# is one outbox row: one Pulse batch of 20 events.
#
#   1. rotel    Rotel (PyPI `rotel`, blackhole exporter, nothing durable) on that load: requests/s
#               and its CPU µs per request. The denominator of every ratio.
#   2. paused   `pulsegate serve` with forwarding paused on the same load: the intake's CPU µs per
#               request, subtracted below. Paused = --upstream a closed loopback port and
#               forwarding.maxConnectsPerWindow 1, so the forwarder fails one connect and then
#               leaves every identity alone for the 10-minute connect window (with the default caps
#               it would retry each of the 1,000 identities with backoff, a failed connect and an
#               outbox write each time — about 1.7 per accepted request in a 5 s debug run).
#   3. pipeline `pulsegate serve --upstream` to a separate `pulsegate ingest --admin` process on the
#               same load for DURATION s (after a warm-up that is drained first), then a bounded
#               wait (DRAIN_TIMEOUT s) until the outbox is empty. End-to-end batches/s = batches
#               stored at the ingest / (load + drain time); gateway CPU µs per forwarded row =
#               (gateway CPU − paused intake CPU/req × requests accepted) / rows forwarded; ingest
#               CPU µs per batch stored.
#   4. drain    one identity's backlog: DRAIN_BATCHES batches of ONE identity accepted with
#               forwarding paused (as in 2), the gateway stopped, a fresh ingest started, the
#               gateway started again with --upstream pointing at it (and backoffMaxMs 10, so a
#               retry time stored by the paused run is due at once instead of parking the head
#               row): drained rows/s =
#               rows forwarded between the restarted gateway's first /livez answer and the empty
#               outbox (or DRAIN_TIMEOUT) / that time, gateway CPU µs per row in the same window,
#               ingest CPU µs per batch (all its CPU since the gateway came back).
# The outbox is polled every 0.1 s on the gateway's /metrics (its CPU is part of the gateway's);
# the ingest's /stats only at the start and end of a measurement, after its CPU was read.
#
# Exactly once (pipeline and drain, counting everything the gateway accepted, warm-up included,
# read once the gateway stopped): every batch the gateway answered 200 (its
# pulsegate_http_requests_total, which also counts the answers in flight when wrk stopped) is a
# batch at the ingest, its records are the ingest's events, the outbox is empty (`pulsegate
# outbox`) and nothing is dead-lettered. Replays the ingest absorbed by batch id
# (`duplicateBatches` of its /stats) are reported, not counted twice. When the outbox did not drain
# within DRAIN_TIMEOUT the verdict is INCOMPLETE if the batches at the ingest plus the rows left
# are the batches accepted. The script exits 1 when the check fails (FAIL); a missed performance
# target only prints MISS.
#
# Environment: DURATION (s, default 15), CONNECTIONS (32), THREADS (wrk threads, 2), IDENTITIES
# (1000), DRAIN_BATCHES (20000), DRAIN_TIMEOUT (s, 120), PORT (14330; the ingest uses PORT+1, its
# admin PORT+3, Rotel's gRPC receiver PORT+2), BIN (a folder holding pulsegate: skips the release
# build, e.g. BIN=.build/debug), SCRATCH (SwiftPM scratch path of the release build), KEEP (1 keeps
# the data directories and logs under /tmp), PROFILE (a folder: the gateway and the ingest are
# profiled during the pipeline's load and drain and during the one-identity drain with
# `perf stat -e context-switches,cpu-migrations,task-clock` and `perf record -e cpu-clock -g`;
# PHASE-PROCESS.stat, PHASE-PROCESS.txt (the top of `perf report --no-children`) and
# PHASE-PROCESS.threads (context switches per thread name, from /proc) land there).
# Rotel comes from the pinned venv of scripts/bench/venv.sh (.build/venv-bench, created on first
# use).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
IDENTITIES=${IDENTITIES:-1000}
DRAIN_BATCHES=${DRAIN_BATCHES:-20000}
DRAIN_TIMEOUT=${DRAIN_TIMEOUT:-120}
PORT=${PORT:-14330}
KEEP=${KEEP:-0}
PROFILE=${PROFILE:-}
PAYLOAD=docs/examples/otlp-logs.json
INGEST_PORT=$((PORT + 1))
ADMIN_PORT=$((PORT + 3))
GATEWAY_URL=http://127.0.0.1:$PORT
METRICS=$GATEWAY_URL/metrics
ADMIN_URL=http://127.0.0.1:$ADMIN_PORT

bench_build pulsegate
source scripts/bench/venv.sh

DATA=$(mktemp -d /tmp/pulsegate-pipeline.XXXXXX)
ROTEL_PID=
GATEWAY_PID=
INGEST_PID=
cleanup() {
  stop "$ROTEL_PID"
  stop "$GATEWAY_PID"
  stop "$INGEST_PID"
  if [ "$KEEP" = 1 ]; then echo "data and logs kept in $DATA" >&2; else rm -rf "$DATA"; fi
}
trap cleanup EXIT

# wrk on the gateway's (or Rotel's) /v1/logs: run_wrk SECONDS IDENTITIES MAX_PER_THREAD.
run_wrk() {
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${1}s" -s scripts/bench/gateway.lua "$GATEWAY_URL/v1/logs" \
    -- "$PAYLOAD" application/json "$2" "${3:-0}"
}

start_gateway() {
  local dir=$1
  shift
  "$BIN/pulsegate" serve --listen "127.0.0.1:$PORT" --data-dir "$dir" "$@" 2>>"$dir.log" &
  GATEWAY_PID=$!
  wait_for "$GATEWAY_URL/livez"
}

start_ingest() {
  local dir=$1
  "$BIN/pulsegate" ingest --listen "127.0.0.1:$INGEST_PORT" --data-dir "$dir" --admin "127.0.0.1:$ADMIN_PORT" \
    >>"$dir.log" 2>&1 &
  INGEST_PID=$!
  wait_for "$ADMIN_URL/stats"
}

# With PROFILE set: perf on a process until profile_stop: profile_start PHASE NAME PID.
PERF_PIDS=()
PERF_NAMES=()
PERF_TARGETS=()
# Context switches (voluntary + involuntary) per thread name of a process: thread_switches PID.
thread_switches() {
  local task
  for task in /proc/"$1"/task/*; do
    [ -r "$task/status" ] || continue
    printf '%s %s\n' "$(tr ' ' '_' <"$task/comm")" \
      "$(awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }' "$task/status")"
  done | awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }' | sort
}
profile_start() {
  [ -n "$PROFILE" ] || return 0
  mkdir -p "$PROFILE"
  perf stat -e context-switches,cpu-migrations,task-clock -p "$3" -o "$PROFILE/$1-$2.stat" 2>/dev/null &
  PERF_PIDS+=($!)
  perf record -q -e cpu-clock -F 2000 -g -p "$3" -o "$PROFILE/$1-$2.data" >/dev/null 2>&1 &
  PERF_PIDS+=($!)
  PERF_NAMES+=("$1-$2")
  PERF_TARGETS+=("$3")
  thread_switches "$3" >"$PROFILE/$1-$2.threads0"
}
profile_stop() {
  [ -n "$PROFILE" ] || return 0
  local pid name i
  for i in "${!PERF_NAMES[@]}"; do
    thread_switches "${PERF_TARGETS[$i]}" >"$PROFILE/${PERF_NAMES[$i]}.threads1"
    join -a 2 -e 0 -o 0,1.2,2.2 "$PROFILE/${PERF_NAMES[$i]}.threads0" "$PROFILE/${PERF_NAMES[$i]}.threads1" |
      awk '{ printf "%-24s %8d\n", $1, $3 - $2 }' | sort -k2 -nr >"$PROFILE/${PERF_NAMES[$i]}.threads"
  done
  for pid in "${PERF_PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${PERF_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for name in "${PERF_NAMES[@]}"; do
    perf report -q --no-children --sort dso,symbol --stdio -g none -i "$PROFILE/$name.data" 2>/dev/null |
      head -40 >"$PROFILE/$name.txt" || true
  done
  PERF_PIDS=()
  PERF_NAMES=()
  PERF_TARGETS=()
}

# The gateway's answers 200 to /v1/logs, whatever route label the metrics use for it.
accepted() {
  curl -fsS "$METRICS" | awk '/^pulsegate_http_requests_total\{/ && /logs/ && /code="200"/ { n += $2 } END { print n + 0 }'
}
forwarded() { metric "$METRICS" 'pulsegate_forward_total{kind="events",result="ok"}'; }
outbox() { metric "$METRICS" pulsegate_outbox_batches; }

# One field of the ingest's /stats for the benchmark's app: ingest_stat FIELD.
ingest_stat() {
  curl -fsS "$ADMIN_URL/stats" | "$BENCH_PYTHON" -c '
import json, sys
app = json.load(sys.stdin).get("apps", {}).get("bench", {})
print(app.get(sys.argv[1], 0))' "$1"
}

# Polls the outbox until it is empty or DEADLINE (monotonic seconds) passed; prints the rows left.
wait_empty() {
  local deadline=$1 left
  while true; do
    left=$(outbox)
    if [ "$left" -eq 0 ] || awk -v now="$(now_seconds)" -v d="$deadline" 'BEGIN { exit !(now >= d) }'; then break; fi
    sleep 0.1
  done
  echo "$left"
}

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", n / s; else print "-" }'; }

EXACT_FAILURES=0
# Prints the exactly-once verdict of a scenario and counts failures. Called once the gateway is
# stopped (nothing moves any more); the outbox is read from its database with `pulsegate outbox`:
# exactly_once NAME GATEWAY_DATA_DIR ACCEPTED RECORDS DUPLICATES_AT_GATEWAY.
exactly_once() {
  local name=$1 dir=$2 accepted=$3 records=$4 gateway_duplicates=$5 batches events absorbed verdict status
  local left left_records dead
  status=$("$BIN/pulsegate" outbox --data-dir "$dir")
  read -r left left_records dead < <(echo "$status" |
    awk '$1 == "bench" { b = $2; r = $3; d = $NF } END { print b + 0, r + 0, d + 0 }')
  batches=$(ingest_stat eventBatches)
  events=$(ingest_stat events)
  absorbed=$(ingest_stat duplicateBatches)
  if [ "$dead" -ne 0 ] || [ "$gateway_duplicates" -ne 0 ] || [ $((batches + left)) -ne "$accepted" ] ||
    [ $((events + left_records)) -ne "$records" ]; then
    verdict=FAIL
    EXACT_FAILURES=$((EXACT_FAILURES + 1))
  elif [ "$left" -ne 0 ]; then
    # Not drained in time: what is stored plus what waits is what was accepted.
    verdict=INCOMPLETE
  else
    verdict=PASS
  fi
  echo "== $name exactly once: $verdict — gateway answered 200 to $accepted batches ($records records);" \
    "ingest stored $batches batches ($events events), absorbed $absorbed replayed batches by id;" \
    "outbox left $left batches ($left_records records), dead letters $dead, gateway duplicates $gateway_duplicates" >&2
  EXACT[$name]="$verdict: 200s $accepted, at ingest $batches (events $events of $records), replays absorbed $absorbed, left $left"
}
declare -A EXACT

# 1. Rotel.
mkdir -p "$DATA/rotel"
start_rotel "$PORT" "$DATA/rotel"
echo "== rotel: warm-up (2 s)" >&2
run_wrk 2 "$IDENTITIES" >/dev/null
ROTEL_LOAD=$(loadavg)
echo "== rotel: wrk $CONNECTIONS connections, $THREADS threads, ${DURATION}s, $IDENTITIES identities (load average $ROTEL_LOAD)" >&2
cpu0=$(cpu_ticks "$ROTEL_PID")
out=$(run_wrk "$DURATION" "$IDENTITIES")
cpu1=$(cpu_ticks "$ROTEL_PID")
echo "$out" >&2
ROTEL_RPS=$(wrk_value "$out" durable_rps)
ROTEL_CPU=$(cpu_us_per $((cpu1 - cpu0)) "$(wrk_value "$out" requests)")
stop "$ROTEL_PID"
ROTEL_PID=

# 2. Intake alone (forwarding paused).
echo '{"forwarding": {"maxConnectsPerWindow": 1}}' >"$DATA/paused.json"
start_gateway "$DATA/paused" --upstream 127.0.0.1:9 --config "$DATA/paused.json"
echo "== paused: warm-up (2 s)" >&2
run_wrk 2 "$IDENTITIES" >/dev/null
PAUSED_LOAD=$(loadavg)
echo "== paused: wrk ${DURATION}s, $IDENTITIES identities, forwarding paused (load average $PAUSED_LOAD)" >&2
n0=$(accepted)
cpu0=$(cpu_ticks "$GATEWAY_PID")
out=$(run_wrk "$DURATION" "$IDENTITIES")
cpu1=$(cpu_ticks "$GATEWAY_PID")
n1=$(accepted)
echo "$out" >&2
PAUSED_RPS=$(wrk_value "$out" durable_rps)
PAUSED_TICKS=$((cpu1 - cpu0))
PAUSED_REQUESTS=$((n1 - n0))
INTAKE_CPU=$(cpu_us_per "$PAUSED_TICKS" "$PAUSED_REQUESTS")
stop "$GATEWAY_PID"
GATEWAY_PID=

# 3. The pipeline with 1,000 identities.
start_ingest "$DATA/pipeline-ingest"
start_gateway "$DATA/pipeline-gateway" --upstream "127.0.0.1:$INGEST_PORT"
echo "== pipeline: warm-up (2 s), then until the outbox is empty (at most ${DRAIN_TIMEOUT}s)" >&2
warm=$(run_wrk 2 "$IDENTITIES")
WRK_OK=$(($(wrk_value "$warm" requests) - $(wrk_value "$warm" non_2xx)))
left=$(wait_empty "$(awk -v n="$(now_seconds)" -v t="$DRAIN_TIMEOUT" 'BEGIN { print n + t }')")
[ "$left" -eq 0 ] || echo "== pipeline: $left warm-up rows still in the outbox; measuring anyway" >&2
b0=$(ingest_stat eventBatches)
n0=$(accepted)
f0=$(forwarded)
PIPELINE_LOAD=$(loadavg)
echo "== pipeline: wrk ${DURATION}s, $IDENTITIES identities (load average $PIPELINE_LOAD)" >&2
g0=$(cpu_ticks "$GATEWAY_PID")
i0=$(cpu_ticks "$INGEST_PID")
t0=$(now_seconds)
profile_start pipeline gateway "$GATEWAY_PID"
profile_start pipeline ingest "$INGEST_PID"
out=$(run_wrk "$DURATION" "$IDENTITIES")
t_load=$(now_seconds)
PIPELINE_BACKLOG=$(outbox)
left=$(wait_empty "$(awk -v n="$t_load" -v t="$DRAIN_TIMEOUT" 'BEGIN { print n + t }')")
t1=$(now_seconds)
profile_stop
g1=$(cpu_ticks "$GATEWAY_PID")
i1=$(cpu_ticks "$INGEST_PID")
n1=$(accepted)
f1=$(forwarded)
b1=$(ingest_stat eventBatches)
echo "$out" >&2
WRK_OK=$((WRK_OK + $(wrk_value "$out" requests) - $(wrk_value "$out" non_2xx)))
PIPELINE_RPS=$(wrk_value "$out" durable_rps)
PIPELINE_SECONDS=$(elapsed "$t0" "$t1")
PIPELINE_DRAIN_SECONDS=$(elapsed "$t_load" "$t1")
PIPELINE_ROWS=$((f1 - f0))
PIPELINE_E2E=$(rate $((b1 - b0)) "$PIPELINE_SECONDS")
PIPELINE_GATEWAY_CPU=$(awk -v t=$((g1 - g0)) -v hz="$TICKS" -v intake="$INTAKE_CPU" -v n=$((n1 - n0)) -v rows="$PIPELINE_ROWS" \
  'BEGIN { if (rows > 0 && intake != "-") printf "%.0f", (t / hz * 1e6 - intake * n) / rows; else print "-" }')
PIPELINE_GATEWAY_TOTAL=$(cpu_us_per $((g1 - g0)) "$PIPELINE_ROWS")
PIPELINE_INGEST_CPU=$(cpu_us_per $((i1 - i0)) $((b1 - b0)))
echo "== pipeline: $((n1 - n0)) batches accepted, $PIPELINE_BACKLOG in the outbox when wrk stopped," \
  "$PIPELINE_ROWS forwarded, $((b1 - b0)) stored at the ingest in ${PIPELINE_SECONDS}s (drain ${PIPELINE_DRAIN_SECONDS}s)," \
  "$left left" >&2
if [ "$WRK_OK" -gt "$n1" ]; then
  echo "== pipeline: wrk saw $WRK_OK 2xx answers but the gateway counts $n1" >&2
  EXACT_FAILURES=$((EXACT_FAILURES + 1))
fi
records=$(metric "$METRICS" 'pulsegate_intake_records_total{signal="logs"}')
duplicates=$(metric "$METRICS" pulsegate_duplicates_total)
PIPELINE_CONNECTS=$(metric "$METRICS" 'pulsegate_upstream_connects_total{result="ok"}')
stop "$GATEWAY_PID"
GATEWAY_PID=
exactly_once pipeline "$DATA/pipeline-gateway" "$n1" "$records" "$duplicates"
PIPELINE_LEFT=$left
stop "$INGEST_PID"
INGEST_PID=

# 4. One identity's backlog drain.
start_gateway "$DATA/drain-gateway" --upstream 127.0.0.1:9 --config "$DATA/paused.json"
echo "== drain: filling the outbox with $DRAIN_BATCHES batches of one identity, forwarding paused" >&2
FILL_LOAD=$(loadavg)
for _ in $(seq 1 60); do
  have=$(outbox)
  [ "$have" -lt "$DRAIN_BATCHES" ] || break
  run_wrk 3 1 $(((DRAIN_BATCHES - have + THREADS - 1) / THREADS)) >/dev/null
done
DRAIN_ACCEPTED=$(accepted)
DRAIN_RECORDS=$(metric "$METRICS" 'pulsegate_intake_records_total{signal="logs"}')
DRAIN_DUPLICATES=$(metric "$METRICS" pulsegate_duplicates_total)
stop "$GATEWAY_PID"
GATEWAY_PID=
echo '{"forwarding": {"backoffBaseMs": 1, "backoffMaxMs": 10}}' >"$DATA/drain.json"
start_ingest "$DATA/drain-ingest"
i0=$(cpu_ticks "$INGEST_PID")
start_gateway "$DATA/drain-gateway" --upstream "127.0.0.1:$INGEST_PORT" --config "$DATA/drain.json"
t0=$(now_seconds)
g0=$(cpu_ticks "$GATEWAY_PID")
f0=$(forwarded)
DRAIN_LOAD=$(loadavg)
echo "== drain: $DRAIN_ACCEPTED rows of one identity, upstream back (load average $DRAIN_LOAD)" >&2
profile_start drain gateway "$GATEWAY_PID"
profile_start drain ingest "$INGEST_PID"
left=$(wait_empty "$(awk -v n="$t0" -v t="$DRAIN_TIMEOUT" 'BEGIN { print n + t }')")
profile_stop
t1=$(now_seconds)
g1=$(cpu_ticks "$GATEWAY_PID")
i1=$(cpu_ticks "$INGEST_PID")
f1=$(forwarded)
DRAIN_SECONDS=$(elapsed "$t0" "$t1")
DRAIN_ROWS=$((f1 - f0))
DRAIN_RATE=$(rate "$DRAIN_ROWS" "$DRAIN_SECONDS")
DRAIN_GATEWAY_CPU=$(cpu_us_per $((g1 - g0)) "$DRAIN_ROWS")
# The ingest did nothing before the gateway came back: all its CPU since then is the drain's.
DRAIN_INGEST_CPU=$(cpu_us_per $((i1 - i0)) "$f1")
echo "== drain: $DRAIN_ROWS rows forwarded in ${DRAIN_SECONDS}s ($f0 before /livez answered), $left left" >&2
stop "$GATEWAY_PID"
GATEWAY_PID=
exactly_once drain "$DATA/drain-gateway" "$DRAIN_ACCEPTED" "$DRAIN_RECORDS" "$DRAIN_DUPLICATES"
DRAIN_LEFT=$left
stop "$INGEST_PID"
INGEST_PID=

# Summary.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b > 0) printf "%.2f", a / b; else print "-" }'; }
verdict() { # verdict VALUE OP LIMIT
  awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
    if (v == "-") print "MISS"; else if ((op == ">=" && v + 0 >= l) || (op == "<=" && v + 0 <= l)) print "PASS"; else print "MISS" }'
}
echo
echo "pipeline benchmark: $CONNECTIONS connections, $THREADS wrk threads, ${DURATION}s load, 20-record OTLP/JSON logs bodies," \
  "$IDENTITIES identities, binaries from $BIN"
printf '%-36s %12s %14s %14s %14s  %s\n' scenario "batches/s" "gateway us/row" "ingest us/bat" "CPU us/req" \
  "load average before (1/5/15 min)"
printf '%-36s %12s %14s %14s %14s  %s\n' "rotel intake (blackhole)" "$ROTEL_RPS" - - "$ROTEL_CPU" "$ROTEL_LOAD"
printf '%-36s %12s %14s %14s %14s  %s\n' "gateway intake, forwarding paused" "$PAUSED_RPS" - - "$INTAKE_CPU" "$PAUSED_LOAD"
printf '%-36s %12s %14s %14s %14s  %s\n' "pipeline end to end, $IDENTITIES identities" "$PIPELINE_E2E" \
  "$PIPELINE_GATEWAY_CPU" "$PIPELINE_INGEST_CPU" "$PIPELINE_GATEWAY_TOTAL" "$PIPELINE_LOAD"
printf '%-36s %12s %14s %14s %14s  %s\n' "drain of one identity" "$DRAIN_RATE" "$DRAIN_GATEWAY_CPU" \
  "$DRAIN_INGEST_CPU" - "$DRAIN_LOAD (fill: $FILL_LOAD)"
echo "pipeline: intake ${PIPELINE_RPS} req/s during the load; $PIPELINE_ROWS rows forwarded in ${PIPELINE_SECONDS}s" \
  "(load ${DURATION}s + drain ${PIPELINE_DRAIN_SECONDS}s), $PIPELINE_LEFT left in the outbox;" \
  "$PIPELINE_CONNECTS upstream connects (warm-up included)."
echo "drain: $DRAIN_ACCEPTED rows; $f0 forwarded before the restarted gateway's /livez answered, then $DRAIN_ROWS in" \
  "${DRAIN_SECONDS}s (the rate's window); $DRAIN_LEFT left in the outbox."
echo
printf '%-52s %10s %8s %10s  %s\n' target value limit "vs Rotel" verdict
target() { # target NAME VALUE OP LIMIT VS_ROTEL
  printf '%-52s %10s %8s %10s  %s\n' "$1" "$2" "$3 $4" "$5" "$(verdict "$2" "$3" "$4")"
}
PIPELINE_RATIO=$(ratio "$PIPELINE_E2E" "$ROTEL_RPS")
DRAIN_RATIO=$(ratio "$DRAIN_RATE" "$ROTEL_RPS")
target "end to end, $IDENTITIES identities / Rotel intake" "$PIPELINE_RATIO" ">=" 0.40 "$PIPELINE_E2E/$ROTEL_RPS"
target "one identity's drain / Rotel intake" "$DRAIN_RATIO" ">=" 0.30 "$DRAIN_RATE/$ROTEL_RPS"
target "gateway CPU us per forwarded row ($IDENTITIES identities)" "$PIPELINE_GATEWAY_CPU" "<=" 60 \
  "$(ratio "$PIPELINE_GATEWAY_CPU" "$ROTEL_CPU")x"
target "gateway CPU us per forwarded row (drain)" "$DRAIN_GATEWAY_CPU" "<=" 60 "$(ratio "$DRAIN_GATEWAY_CPU" "$ROTEL_CPU")x"
target "ingest CPU us per 20-event batch ($IDENTITIES identities)" "$PIPELINE_INGEST_CPU" "<=" 200 \
  "$(ratio "$PIPELINE_INGEST_CPU" "$ROTEL_CPU")x"
target "ingest CPU us per 20-event batch (drain)" "$DRAIN_INGEST_CPU" "<=" 200 "$(ratio "$DRAIN_INGEST_CPU" "$ROTEL_CPU")x"
echo "exactly once, pipeline: ${EXACT[pipeline]}"
echo "exactly once, drain: ${EXACT[drain]}"
echo "vs Rotel: throughput as value/Rotel's requests/s; CPU as a multiple of Rotel's CPU us per request ($ROTEL_CPU)."
echo "gateway us/row: the gateway's CPU minus the paused intake's CPU per request x requests accepted, per row forwarded"
echo "(pipeline; the CPU us/req column is the gateway's total CPU per row); drain: all of the gateway's CPU per row."
if [ "$EXACT_FAILURES" -ne 0 ]; then
  echo "exactly once: FAILED ($EXACT_FAILURES check(s))" >&2
  exit 1
fi
