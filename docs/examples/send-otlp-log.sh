#!/usr/bin/env bash
# Sends one OTLP/JSON log record to a PulseGate gateway with curl, retrying as docs/clients.md says
# (Tests/Interop/test_stock_clients.py runs this script against the real gateway).
#
#   PULSEGATE_APP_ID=shop ./send-otlp-log.sh "nightly export finished"
#
# Environment: PULSEGATE_URL (default http://127.0.0.1:4318), PULSEGATE_APP_ID (required),
# PULSEGATE_APP_KEY (when the app has keys), PULSEGATE_DEVICE_ID (default: the host name),
# PULSEGATE_ATTEMPTS (default 10). The message is the first argument.
set -euo pipefail

url=${PULSEGATE_URL:-http://127.0.0.1:4318}
app=${PULSEGATE_APP_ID:?set PULSEGATE_APP_ID}
device=${PULSEGATE_DEVICE_ID:-$(hostname)}
attempts=${PULSEGATE_ATTEMPTS:-10}
message=${1:-hello from curl}
message=${message//\\/\\\\}
message=${message//\"/\\\"}

# One batch id per batch, made once and sent again with every retry of this batch: a retry of a
# batch that already got through is answered 200 with Apsio-Duplicate: true and stored once.
batch_id=$(cat /proc/sys/kernel/random/uuid)
now_ns=$(date +%s%N)
body=$(printf '{"resourceLogs":[{"resource":{"attributes":[%s]},"scopeLogs":[{"scope":{"name":"curl"},"logRecords":[{"timeUnixNano":"%s","severityNumber":9,"body":{"stringValue":"%s"}}]}]}]}' \
  '{"key":"service.name","value":{"stringValue":"send-otlp-log"}}' "$now_ns" "$message")
headers=(
  -H 'Content-Type: application/json'
  -H 'Content-Encoding: gzip'
  -H "Apsio-App-Id: $app"
  -H "Apsio-Batch-Id: $batch_id"
  -H "Apsio-Device-Id: $device"
  -H 'Apsio-Platform: linux'
  -H "Apsio-Sdk-Version: curl/$(curl --version | awk 'NR == 1 { print $2 }')"
)
[ -n "${PULSEGATE_APP_KEY:-}" ] && headers+=(-H "Authorization: Bearer $PULSEGATE_APP_KEY")

answer=$(mktemp)
response_headers=$(mktemp)
trap 'rm -f "$answer" "$response_headers"' EXIT
for attempt in $(seq 1 "$attempts"); do
  status=$(printf '%s' "$body" | gzip -c | curl -sS -o "$answer" -D "$response_headers" -w '%{http_code}' \
    -X POST "${headers[@]}" --data-binary @- "$url/v1/logs") || status=000
  case $status in
    200)
      echo "accepted (batch $batch_id$(grep -qi '^Apsio-Duplicate: true' "$response_headers" && echo ', duplicate'))"
      exit 0
      ;;
    429 | 503 | 000)
      # Retry the same bytes with the same batch id after Retry-After (5 s when absent).
      wait=$(awk 'tolower($1) == "retry-after:" { print $2 + 0 }' "$response_headers" | tr -d '\r')
      echo "attempt $attempt: HTTP $status, retrying in ${wait:-5} s" >&2
      sleep "${wait:-5}"
      ;;
    *)
      # Any other status is final: nothing was stored, and sending the same bytes again will not help.
      echo "refused with HTTP $status: $(cat "$answer")" >&2
      exit 1
      ;;
  esac
done
echo "gave up after $attempts attempts (batch $batch_id)" >&2
exit 1
