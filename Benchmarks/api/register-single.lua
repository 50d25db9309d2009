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
  -- SINGLE_CONTENT_TYPE="application/json;charset=UTF-8" sends them through the generated route
  -- (TokenRegistrationMiddleware leaves that form to it): the same server, without its fast path.
  local contentType = os.getenv("SINGLE_CONTENT_TYPE")
  if contentType == nil or contentType == "" then contentType = "application/json" end
  wrk.headers["Content-Type"] = contentType
  wrk.body = '{"environment":"sandbox","attributesType":"MatchAttributes","iosVersion":"18.2"}'
end
function request()
  counter = counter + 1
  return wrk.format(nil, string.format("/v1/push-to-start-tokens/%032x%032x", id + 100, counter))
end
