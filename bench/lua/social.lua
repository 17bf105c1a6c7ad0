-- Boosts and poll votes, a new pair every request (bench/benchlib/social.py). Pair
-- k = OFFSET + tid + THREADS * n, n this thread's count of new pairs; the harness moves OFFSET past
-- the pairs a run used. Usage:
--   wrk ... -s social.lua URL -- MODE(boost|vote) SYSTEM(plaza|pocketbase) TOKENS_FILE USER_IDS_FILE TARGETS_FILE OFFSET THREADS
-- boost: TARGETS are posts; pair k -> user u = k % U, post (floor(k / U) + u * floor(P / U)) % P, as
--   in like.lua. After its first 64 boosts a thread alternates: undo its boost of 64 pairs before
--   (long answered, with 16 connections a thread), boost a new pair.
-- vote: TARGETS are polls; pair k -> voter k % U on poll floor(k / U) (every voter once a poll), all
--   connections on one poll until its voters are through.
local threads = {}
local next_id = 0
local LAG = 64

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local function lines(file)
  local t = {}
  for line in io.lines(file) do if line ~= "" then t[#t + 1] = line end end
  if #t == 0 then error("empty file " .. file) end
  return t
end

function init(args)
  mode, system = args[1], args[2]
  tokens, users, targets = lines(args[3]), lines(args[4]), lines(args[5])
  offset, nthreads = tonumber(args[6]), tonumber(args[7])
  if #tokens ~= #users then error("tokens and user ids differ in length") end
  stride = math.max(1, math.floor(#targets / #users))
  sent = 0 -- new pairs (boosts or votes) this thread sent
  undone = 0 -- boosts it undid
  undo_next = false
end

local function headers(auth, body)
  local h = { ["Authorization"] = auth, ["Accept"] = "application/json" }
  if body then h["Content-Type"] = "application/json" end
  return h
end

local function pair(n)
  return offset + tid + nthreads * n
end

local function boost(n, undo)
  local k = pair(n)
  local u = k % #users
  local post = targets[(math.floor(k / #users) + u * stride) % #targets + 1]
  local auth = tokens[u + 1]
  if system == "plaza" then
    return wrk.format(undo and "DELETE" or "PUT", "/api/v1/posts/" .. post .. "/boost", headers(auth))
  end
  local id = string.format("b%014d", k)
  if undo then
    return wrk.format("DELETE", "/api/collections/boosts/records/" .. id, headers(auth))
  end
  local body = '{"id":"' .. id .. '","post":"' .. post .. '","user":"' .. users[u + 1] .. '"}'
  return wrk.format("POST", "/api/collections/boosts/records", headers(auth, body), body)
end

local function vote(n)
  local k = pair(n)
  local u = k % #users
  local poll = targets[math.floor(k / #users) % #targets + 1]
  local choices = '[' .. (k % 3) .. ']'
  local auth = tokens[u + 1]
  if system == "plaza" then
    return wrk.format("POST", "/api/v1/posts/" .. poll .. "/poll/votes", headers(auth, true), '{"choices":' .. choices .. '}')
  end
  local body = '{"poll":"' .. poll .. '","user":"' .. users[u + 1] .. '","choices":' .. choices .. '}'
  return wrk.format("POST", "/api/collections/votes/records", headers(auth, true), body)
end

function request()
  if tid == 0 and not verified then
    -- wrk calls thread 0's request() once before the run to check it, and sends nothing of it: a
    -- boost counted there would never be made, and its undo would fail.
    verified = true
    return wrk.format("GET", "/")
  end
  if mode == "vote" then
    sent = sent + 1
    return vote(sent - 1)
  end
  if undo_next and sent - undone > LAG then
    undo_next = false
    undone = undone + 1
    return boost(undone - 1, true)
  end
  undo_next = sent >= LAG
  sent = sent + 1
  return boost(sent - 1, false)
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
