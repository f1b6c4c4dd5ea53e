-- wrk script of the benchmarks (scripts/bench-gateway.sh, scripts/bench-pipeline.sh): POSTs one
-- OTLP logs payload with a unique Apsio-Batch-Id per request (so every request is a new, durable
-- write, never a duplicate) and prints machine-readable totals and latency percentiles.
--
-- Arguments (after wrk's `--`): the body's file (default docs/examples/otlp-logs.json), its
-- Content-Type (default application/json), IDENTITIES, MAX.
--   IDENTITIES  0 (default): the body is sent as it is. N > 0 (JSON bodies of the shape of
--               docs/examples/otlp-logs.json only): N bodies are built at init that differ only in
--               the resource's `device.id` and `app.installation.id` (N device identities), and
--               requests rotate through them; every `log.record.uid` is also made unique per
--               request (the batch id plus the record's index), so the upstream's event-id
--               deduplication absorbs nothing and every batch stores all its records.
--   MAX         0 (default): unbounded. M > 0: each wrk thread stops after sending M requests (fills
--               an outbox with about threads × M batches; answers in flight may be lost to wrk).
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
local identities = 0
local max_requests = 0
local heads -- per identity: the body up to the first record uid
local parts -- the request's pieces: head, uid 1, text, uid 2, ..., text after the last uid
local uid_count = 0

local DEVICE_ID = "6F1C2A9E-0B7D-4E2B-9F4A-3E1D2C0B9A87"
local INSTALLATION_ID = "inst-5b1c9e"
local UID_KEY = '{"key":"log.record.uid","value":{"stringValue":"'

-- Replaces every occurrence of `old` in `text` by `new` (plain text, no patterns).
local function replace(text, old, new)
  local out, from = {}, 1
  while true do
    local first, last = string.find(text, old, from, true)
    if not first then break end
    table.insert(out, string.sub(text, from, first - 1))
    table.insert(out, new)
    from = last + 1
  end
  table.insert(out, string.sub(text, from))
  return table.concat(out)
end

local function count(text, needle)
  local n, from = 0, 1
  while true do
    local _, last = string.find(text, needle, from, true)
    if not last then return n end
    n = n + 1
    from = last + 1
  end
end

function init(args)
  local path = args[1] or "docs/examples/otlp-logs.json"
  local content_type = args[2] or "application/json"
  identities = tonumber(args[3] or "0")
  max_requests = tonumber(args[4] or "0")
  local file = assert(io.open(path, "rb"))
  body = file:read("*a")
  file:close()
  prefix = string.format("bench-%d-%d-%d-", tid, os.time(), math.random(1, 1000000000))
  headers = { ["Content-Type"] = content_type, ["Apsio-App-Id"] = "bench" }
  if identities > 0 then
    assert(count(body, DEVICE_ID) == 1 and count(body, INSTALLATION_ID) == 1,
      "IDENTITIES needs a body with the device.id and app.installation.id of docs/examples/otlp-logs.json")
    -- Split at the record uids: parts[1] (the resource, per identity), then for each uid its
    -- value's slot and the text up to the next one.
    parts = {}
    local from = 1
    while true do
      local _, key_end = string.find(body, UID_KEY, from, true)
      if not key_end then break end
      local value_end = assert(string.find(body, '"', key_end + 1, true))
      table.insert(parts, string.sub(body, from, key_end))
      table.insert(parts, false)
      from = value_end
      uid_count = uid_count + 1
    end
    table.insert(parts, string.sub(body, from))
    assert(uid_count > 0, "IDENTITIES needs records with log.record.uid attributes")
    heads = {}
    for i = 1, identities do
      -- Same lengths as the originals, so every body has the same size.
      local device = string.format("6F1C2A9E-0B7D-4E2B-9F4A-%012d", i)
      local installation = string.format("inst-%06d", i)
      heads[i] = replace(replace(parts[1], DEVICE_ID, device), INSTALLATION_ID, installation)
    end
  end
end

function request()
  counter = counter + 1
  if max_requests > 0 and counter >= max_requests then
    -- This request is still sent; the thread stops once the event loop comes around (no
    -- response() callback, which would make wrk parse every answer for every scenario).
    wrk.thread:stop()
  end
  local batch_id = prefix .. counter
  headers["Apsio-Batch-Id"] = batch_id
  if identities == 0 then
    return wrk.format("POST", "/v1/logs", headers, body)
  end
  -- Threads start at different identities, so together they cover all of them evenly.
  parts[1] = heads[(counter + (tid - 1) * 7919) % identities + 1]
  for k = 1, uid_count do
    parts[2 * k] = batch_id .. "-" .. k
  end
  return wrk.format("POST", "/v1/logs", headers, table.concat(parts))
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
