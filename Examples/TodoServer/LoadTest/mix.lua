-- A mix of reads and writes against TodoServer, for wrk:
--
--     wrk -t2 -c32 -d10s --latency -s mix.lua http://127.0.0.1:PORT -- FIRST_ID LAST_ID
--
-- FIRST_ID..LAST_ID are todos that exist before the run and are never deleted (reads and
-- PATCHes go there); DELETEs only remove todos this thread created, so every request of the
-- mix should succeed. done() prints one RESULT line that .ci/check-examples parses.
--
-- With a third argument, a path prefix, each thread also writes PREFIX.N, a line a fact, as it
-- happens (so the file is complete even if wrk is killed): `posting` when a POST is sent,
-- `created ID` when one is answered 201, `deleting ID` when a DELETE is sent, `deleted` when
-- one is answered 204, `failed STATUS` for any other status. .ci/check-replication compares
-- them with the database restored after the server was killed.
--
--   45% GET /todos?limit=20        10% GET /todos/:id       10% GET /todos/count
--   15% POST /todos                12% PATCH /todos/:id      8% DELETE /todos/:id

local threads = {}
local next_thread = 0

function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_number", next_thread)
  table.insert(threads, thread)
end

local first_id, last_id
local created = {}              -- ids this thread created and has not deleted yet
-- Per-thread counters: globals, so that done() can read them with thread:get().
non2xx, creates, deletes = 0, 0, 0
local json = { ["Content-Type"] = "application/json" }
local facts                     -- the file of facts (see above), or nil

local function fact(...)
  if facts then facts:write(...) facts:write("\n") end
end

function init(args)
  first_id = tonumber(args[1]) or 1
  last_id = tonumber(args[2]) or first_id
  math.randomseed(os.time() * 100 + thread_number)
  if args[3] then
    facts = assert(io.open(args[3] .. "." .. thread_number, "w"))
    facts:setvbuf("line")
  end
end

local function seeded_id()
  return math.random(first_id, last_id)
end

function request()
  local dice = math.random(100)
  if dice <= 45 then
    return wrk.format("GET", "/todos?limit=20")
  elseif dice <= 55 then
    return wrk.format("GET", "/todos/" .. seeded_id())
  elseif dice <= 65 then
    return wrk.format("GET", "/todos/count")
  elseif dice <= 92 and dice > 80 then
    local body = (math.random(2) == 1) and '{"done":true}' or '{"done":false,"title":"edited under load"}'
    return wrk.format("PATCH", "/todos/" .. seeded_id(), json, body)
  elseif dice > 92 and #created > 0 then
    local id = table.remove(created)
    fact("deleting ", id)
    return wrk.format("DELETE", "/todos/" .. id)
  else
    fact("posting")
    return wrk.format("POST", "/todos", json, '{"title":"written under load"}')
  end
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    fact("failed ", status)
  elseif status == 201 then
    creates = creates + 1
    local id = body:match('"id":(%d+)')
    if id then
      table.insert(created, id)
      fact("created ", id)
    end
  elseif status == 204 then
    deletes = deletes + 1
    fact("deleted")
  end
end

function done(summary, latency, requests)
  local total_non2xx, total_creates, total_deletes = 0, 0, 0
  for _, thread in ipairs(threads) do
    total_non2xx = total_non2xx + thread:get("non2xx")
    total_creates = total_creates + thread:get("creates")
    total_deletes = total_deletes + thread:get("deletes")
  end
  local seconds = summary.duration / 1e6
  local errors = summary.errors
  io.write(string.format(
    "RESULT requests=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f " ..
    "connect_errors=%d read_errors=%d write_errors=%d timeouts=%d status_errors=%d non2xx=%d " ..
    "created=%d deleted=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    errors.connect, errors.read, errors.write, errors.timeout, errors.status, total_non2xx,
    total_creates, total_deletes))
end
