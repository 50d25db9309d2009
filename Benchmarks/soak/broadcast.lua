-- wrk: POST /v1/events/{key}/broadcasts with the publisher key, an update (no alert: priority 5)
-- to the events in turn: the scheduler's goals and minutes. Paced to SOAK_RATE (paced.lua).
dofile(os.getenv("SOAK_LUA_DIR") .. "/paced.lua")
function init(args)
  paced_init()
  events = soak_events()
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("SOAK_KEY")
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  sent = sent + 1
  local body = string.format('{"event":"update","contentState":{"homeScore":%d,"awayScore":0,"minute":%d}}', sent % 7, sent % 90)
  return wrk.format(nil, "/v1/events/" .. events[(sent + id) % #events + 1] .. "/broadcasts", nil, body)
end
