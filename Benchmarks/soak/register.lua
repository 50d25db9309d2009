-- wrk: PUT /v1/push-to-start-tokens/{token} with the app key: a population of SOAK_POPULATION
-- devices (deviceID fan-N, tag "churn") registering in turn, again and again. Registration number c
-- is device c mod P's k-th (k = c div P); a tenth of the devices (N divisible by 10) register a new
-- token with each re-registration, the same deviceID (rotation), the rest the same token again.
-- This process takes numbers SOAK_BASE + SOAK_SLOT + n × SOAK_STRIDE (other processes the rest) and
-- reports the next number it would have taken as "sent", so the next minute continues the sequence.
dofile(os.getenv("SOAK_LUA_DIR") .. "/paced.lua")
function init(args)
  paced_init()
  base = tonumber(os.getenv("SOAK_BASE"))
  slot = tonumber(os.getenv("SOAK_SLOT"))
  stride = tonumber(os.getenv("SOAK_STRIDE"))
  population = tonumber(os.getenv("SOAK_POPULATION"))
  wrk.method = "PUT"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("SOAK_KEY")
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  local c = base + slot + sent * stride
  sent = sent + 1
  local device = c % population
  local round = math.floor(c / population)
  local generation = (device % 10 == 0) and round or 0
  local body = string.format(
    '{"environment":"sandbox","attributesType":"MatchAttributes","deviceID":"fan-%d","iosVersion":"18.2","tags":["churn"]}', device)
  return wrk.format(nil, string.format("/v1/push-to-start-tokens/50a4%028x%032x", generation, device), nil, body)
end
