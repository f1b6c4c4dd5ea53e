-- wrk script for scripts/bench-gateway.sh: POSTs one OTLP logs payload (arguments: the body's file
-- and its Content-Type, default application/json) with a unique Apsio-Batch-Id per request (so every request is a new, durable write, never a duplicate) and
-- prints machine-readable totals and latency percentiles.
local threads = {}
local next_id = 1

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local body
local prefix
local counter = 0
local headers

function init(args)
  local path = args[1] or "docs/examples/otlp-logs.json"
  local content_type = args[2] or "application/json"
  local file = assert(io.open(path, "rb"))
  body = file:read("*a")
  file:close()
  prefix = string.format("bench-%d-%d-%d-", tid, os.time(), math.random(1, 1000000000))
  headers = { ["Content-Type"] = content_type, ["Apsio-App-Id"] = "bench" }
end

function request()
  counter = counter + 1
  headers["Apsio-Batch-Id"] = prefix .. counter
  return wrk.format("POST", "/v1/logs", headers, body)
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  local ok = summary.requests - summary.errors.status - errors
  io.write(string.format("bench.requests %d\n", summary.requests))
  io.write(string.format("bench.non_2xx %d\n", summary.errors.status))
  io.write(string.format("bench.socket_errors %d\n", errors))
  io.write(string.format("bench.seconds %.3f\n", seconds))
  io.write(string.format("bench.durable_rps %.1f\n", ok / seconds))
  io.write(string.format("bench.p50_ms %.3f\n", latency:percentile(50) / 1000))
  io.write(string.format("bench.p99_ms %.3f\n", latency:percentile(99) / 1000))
end
