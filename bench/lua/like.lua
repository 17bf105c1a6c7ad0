-- Likes: every request is a fresh (user, post) pair, so nothing is a duplicate and PocketBase's
-- unique (post, user) index never refuses one. Pair k -> user u = k % U and post
-- (floor(k / U) + u * floor(P / U)) % P (one-to-one for k < U * P, and consecutive requests like
-- different posts), with k = OFFSET + tid + THREADS * n (n = this thread's request count); the
-- harness moves OFFSET past the pairs a run used. Usage:
--   wrk ... -s like.lua URL -- SYSTEM(plaza|pocketbase) TOKENS_FILE USER_IDS_FILE POST_IDS_FILE OFFSET THREADS
local threads = {}
local next_id = 0

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
  system = args[1]
  tokens, users, posts = lines(args[2]), lines(args[3]), lines(args[4])
  offset, nthreads = tonumber(args[5]), tonumber(args[6])
  if #tokens ~= #users then error("tokens and user ids differ in length") end
  stride = math.max(1, math.floor(#posts / #users))
  sent = 0
end

function request()
  local k = offset + tid + nthreads * sent
  sent = sent + 1
  local u = k % #users
  local p = (math.floor(k / #users) + u * stride) % #posts
  local auth = tokens[u + 1]
  if system == "plaza" then
    return wrk.format("PUT", "/api/v1/posts/" .. posts[p + 1] .. "/like",
      { ["Authorization"] = auth, ["Accept"] = "application/json" })
  end
  return wrk.format("POST", "/api/collections/likes/records",
    { ["Authorization"] = auth, ["Accept"] = "application/json", ["Content-Type"] = "application/json" },
    '{"post":"' .. posts[p + 1] .. '","user":"' .. users[u + 1] .. '"}')
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
