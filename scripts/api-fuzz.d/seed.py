#!/usr/bin/env python3
"""Seeds a fresh `marquee serve` for schemathesis (scripts/api-fuzz): an app with a signing key,
one key per role, events, push-to-start tokens, an activity, a job and a schedule, so that the
fuzzed operations reach real resources rather than 404. Prints the IDs as shell assignments
(FUZZ_*=...) for the caller to export. Standard library only; talks to the server's loopback
address it is given and nothing else.

    seed.py BASE_URL DEPLOYMENT_KEY
"""
import json
import sys
import urllib.error
import urllib.request

BASE, DEPLOYMENT_KEY = sys.argv[1], sys.argv[2]
TOKENS = ["ab" * 32, "cd" * 32, "ef" * 32]
UPDATE_TOKEN = "12" * 32
DEVICE_TOKENS = ["a1" * 32, "b2" * 32, "c3" * 32]


def call(method, path, key, body=None, expect=(200, 201, 202, 204)):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Authorization", "Bearer " + key)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    if status not in expect:
        sys.exit(f"seed: {method} {path} answered {status}: {text}")
    return json.loads(text) if text else {}


def signing_key_example():
    """The document's own signing-key example: a valid throwaway P-256 key."""
    with urllib.request.urlopen(BASE + "/openapi.json", timeout=60) as response:
        document = json.load(response)
    put = document["paths"]["/v1/apps/{appID}/signing-key"]["put"]
    return put["requestBody"]["content"]["application/json"]["example"]


app = call("POST", "/v1/apps", DEPLOYMENT_KEY, {
    "name": "Fuzz", "bundleID": "com.example.fuzz", "teamID": "FUZZ123456", "environments": ["sandbox", "production"],
})
app_id = app["id"]
spare = call("POST", "/v1/apps", DEPLOYMENT_KEY, {
    "name": "Spare", "bundleID": "com.example.spare", "teamID": "FUZZ123456", "environments": ["sandbox", "production"],
})
call("PUT", f"/v1/apps/{app_id}/signing-key", DEPLOYMENT_KEY, signing_key_example())
keys = {}
for role in ["admin", "publisher", "app", "app"]:
    created = call("POST", f"/v1/apps/{app_id}/api-keys", DEPLOYMENT_KEY, {"role": role, "label": f"fuzz {role}"})
    keys.setdefault(role, created)
    keys["victim"] = created  # the last one: the key revokeAPIKey may revoke
publisher = keys["publisher"]["key"]
app_key = keys["app"]["key"]

event = {
    "title": "Fuzz match", "attributesType": "MatchAttributes", "environments": ["sandbox", "production"],
    "plannedStart": "2030-01-01T15:00:00Z", "plannedEnd": "2030-01-01T17:00:00Z",
}
call("PUT", "/v1/events/fuzz-event", publisher, event)
doomed = call("PUT", "/v1/events/fuzz-doomed", publisher, event)
channel_id = doomed["channels"][0]["id"]
# Each device with its ID and its app's device token (the background push's address). The fuzzed
# token (TOKENS[0]) is registered in both environments, so that a presence report for the event
# (reportDevicePresence, path.token) finds it whichever environment the fuzzer names.
call("POST", "/v1/push-to-start-tokens/batch", app_key, {"tokens": [
    {"token": token, "environment": environment, "attributesType": "MatchAttributes", "tags": ["arsenal"],
     "deviceID": f"fuzz-device-{index}-{environment}", "deviceToken": DEVICE_TOKENS[index]}
    for index, token in enumerate(TOKENS) for environment in ["sandbox", "production"]
    if index == 0 or environment == "sandbox"
]})
call("PUT", "/v1/activities/fuzz-activity/update-token", app_key,
     {"eventKey": "fuzz-event", "environment": "sandbox", "token": UPDATE_TOKEN})
start = {
    "environment": "sandbox", "attributes": {"homeTeam": "Arsenal"}, "contentState": {"minute": 0},
    "alert": {"title": "Kick-off", "body": "It has started"},
    # Tokens the fuzzer registers while the event is live are then queued as late joiners.
    "lateJoiners": {"alert": {"title": "You're in", "body": "The match is on"}},
}
job = call("POST", "/v1/events/fuzz-event/starts", publisher, start)
# The devices' word for the event, so that its funnel (getEventFunnel) and the funnel over time
# (getEventFunnelSeries: path.eventKey is this event for every operation) have reports beside starts.
call("PUT", f"/v1/events/fuzz-event/presence/{TOKENS[1]}", app_key, {"environment": "sandbox", "state": "absent"})
call("PUT", f"/v1/events/fuzz-event/presence/{TOKENS[2]}", app_key,
     {"environment": "sandbox", "state": "showing", "activityID": "fuzz-seeded-activity"})
schedule = call("POST", "/v1/events/fuzz-event/broadcasts", publisher,
                {"event": "update", "contentState": {"minute": 1}, "at": "2030-01-01T15:30:00Z"})

seed = {
    "FUZZ_APP_ID": app_id,
    "FUZZ_SPARE_APP_ID": spare["id"],
    "FUZZ_DEPLOYMENT_KEY": DEPLOYMENT_KEY,
    "FUZZ_ADMIN_KEY": keys["admin"]["key"],
    "FUZZ_PUBLISHER_KEY": publisher,
    "FUZZ_APP_KEY": app_key,
    "FUZZ_KEY_ID": keys["victim"]["apiKey"]["id"],
    "FUZZ_EVENT_KEY": "fuzz-event",
    "FUZZ_DOOMED_EVENT_KEY": "fuzz-doomed",
    "FUZZ_CHANNEL_ID": channel_id,
    "FUZZ_TOKEN": TOKENS[0],
    "FUZZ_ACTIVITY_ID": "fuzz-activity",
    "FUZZ_JOB_ID": job["id"],
    "FUZZ_SCHEDULE_ID": schedule["id"],
}
for name, value in seed.items():
    print(f"{name}={value}")
