-- Shared by the soak's wrk scripts (each dofile's it first). A wrk process sends at most SOAK_RATE
-- requests a second in all: its connections take turns at slots SOAK_RATE⁻¹ apart (per thread, its
-- share), so a slow server lowers the rate rather than piling up a burst. It counts the answers by
-- status and prints its figures as one line, "SOAK {json}", which Benchmarks/soak/match_day.py reads:
-- with its latencies as a histogram, so that the script can pool processes and minutes into one
-- percentile (a percentile of percentiles is not one).
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
int clock_gettime(int clock_id, soak_timespec *tp);
]]
local now_spec = ffi.new("soak_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, now_spec) -- CLOCK_MONOTONIC
  return tonumber(now_spec.tv_sec) * 1000 + tonumber(now_spec.tv_nsec) / 1e6
end

local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

-- Called by each script's init: the slot length from the rate and this process's thread count.
function paced_init()
  local rate = tonumber(os.getenv("SOAK_RATE"))
  local thread_count = tonumber(os.getenv("SOAK_THREADS") or "1")
  interval_ms = 1000 * thread_count / rate
  next_slot = now_ms()
  statuses = {}
  sent = 0
end

function delay()
  local now = now_ms()
  local slot = math.max(next_slot, now)
  next_slot = slot + interval_ms
  return math.floor(slot - now)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

-- The histogram's buckets are 1 % wide on a log scale, each written as [upper end in µs, count]:
-- a percentile read from them is at most 1 % above the exact one, and a minute of 300,000 reads
-- fits in a few hundred pairs.
local LOG_STEP = math.log(1.01)
local function histogram(latency)
  local buckets = {}
  for i = 1, #latency do
    local value, count = latency(i)
    local k = value < 1 and 0 or math.floor(math.log(value) / LOG_STEP)
    buckets[k] = (buckets[k] or 0) + count
  end
  local pairs_out = {}
  for k, count in pairs(buckets) do
    pairs_out[#pairs_out + 1] = string.format("[%d,%d]", math.ceil(math.exp((k + 1) * LOG_STEP)), count)
  end
  return "[" .. table.concat(pairs_out, ",") .. "]"
end

function done(summary, latency, requests)
  local merged, sent_total = {}, 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses") or {}) do
      merged[tostring(status)] = (merged[tostring(status)] or 0) + n
    end
    sent_total = sent_total + (thread:get("sent") or 0)
  end
  local parts = {}
  for status, n in pairs(merged) do parts[#parts + 1] = string.format('"%s":%d', status, n) end
  local e = summary.errors
  io.write(string.format(
    'SOAK {"requests":%d,"sent":%d,"durationUs":%d,"statuses":{%s},"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},' ..
    '"p50Us":%d,"p99Us":%d,"maxUs":%d,"histogram":%s}\n',
    summary.requests, sent_total, summary.duration, table.concat(parts, ","), e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max, histogram(latency)))
end

-- The event keys, comma-separated in SOAK_EVENTS.
function soak_events()
  local events = {}
  for key in string.gmatch(os.getenv("SOAK_EVENTS"), "[^,]+") do events[#events + 1] = key end
  return events
end
