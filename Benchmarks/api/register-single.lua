-- wrk: PUT /v1/push-to-start-tokens/<token>, one new token per request.
local threads = {}
function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  counter = 0
  wrk.method = "PUT"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("APP_KEY")
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"environment":"sandbox","attributesType":"MatchAttributes","iosVersion":"18.2"}'
end
function request()
  counter = counter + 1
  return wrk.format(nil, string.format("/v1/push-to-start-tokens/%032x%032x", id + 100, counter))
end
