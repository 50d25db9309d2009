-- wrk: GET /v1/events/<EVENT>/channels/sandbox with an app key, as every follower's app asks at
-- kick-off; with ETAG set, sent back in If-None-Match (the 304 a revalidating app gets).
function init(args)
  wrk.method = "GET"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("APP_KEY")
  local etag = os.getenv("ETAG")
  if etag and etag ~= "" then wrk.headers["If-None-Match"] = etag end
  wrk.path = "/v1/events/" .. os.getenv("EVENT") .. "/channels/sandbox"
end
