-- wrk: POST /v1/push-to-start-tokens/batch with BATCH new tokens per request, every token unique
-- across threads and requests (the thread's number and a counter make the 64 hex digits).
local threads = {}
function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  batch = tonumber(os.getenv("BATCH") or "1000")
  counter = 0
  wrk.method = "POST"
  wrk.path = "/v1/push-to-start-tokens/batch"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("APP_KEY")
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  local parts = {}
  for i = 1, batch do
    counter = counter + 1
    parts[i] = string.format('{"token":"%032x%032x","environment":"sandbox","attributesType":"MatchAttributes","iosVersion":"18.2","tags":["bench"]}', id, counter)
  end
  return wrk.format(nil, nil, nil, '{"tokens":[' .. table.concat(parts, ",") .. ']}')
end
