-- wrk: GET /v1/events/{key}/channels/sandbox with the app key, the events in turn: what every
-- follower's app asks at kick-off. Paced to SOAK_RATE (paced.lua).
dofile(os.getenv("SOAK_LUA_DIR") .. "/paced.lua")
function init(args)
  paced_init()
  events = soak_events()
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("SOAK_KEY")
end
function request()
  sent = sent + 1
  return wrk.format("GET", "/v1/events/" .. events[(sent + id) % #events + 1] .. "/channels/sandbox")
end
