-- Cycles through a prepared list of requests (one per line: METHOD \t PATH \t AUTH \t BODY).
-- Each wrk thread starts at a different place in the list. Usage:
--   wrk ... -s rotate.lua URL -- REQUESTS_FILE THREADS
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  local file, nthreads = args[1], tonumber(args[2]) or 1
  reqs = {}
  for line in io.lines(file) do
    local method, path, auth, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
    if method then
      local headers = { ["Accept"] = "application/json" }
      if auth ~= "" then headers["Authorization"] = auth end
      if body ~= "" then headers["Content-Type"] = "application/json" else body = nil end
      reqs[#reqs + 1] = wrk.format(method, path, headers, body)
    end
  end
  if #reqs == 0 then error("no requests in " .. file) end
  idx = (tid * math.floor(#reqs / nthreads)) % #reqs
  sent = 0
end

function request()
  idx = idx % #reqs + 1
  sent = sent + 1
  return reqs[idx]
end

function done(summary, latency, requests)
  local maxsent = 0
  for _, t in ipairs(threads) do
    local s = t:get("sent") or 0
    if s > maxsent then maxsent = s end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,"max_sent":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean, maxsent))
end
