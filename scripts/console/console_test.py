"""Browser tests of the web console: headless Chromium (Debian's `chromium`) driven by Playwright,
axe-core's rules through axe-playwright-python. Run by scripts/console-test against a running
`marquee serve`:

    console_test.py --base http://127.0.0.1:PORT --key mq_... --store sqlite [--screenshots docs/console]

The story a producer lives: sign in with the deployment key, create an app with its .p8 and a
publisher key, sign in with that, create an event, add 200 virtual iPhones, start with live
progress to the end, broadcast a goal from the composer, read the log, watch the device wall show
the score, end the event, sign out. On every view: no serious or critical axe violation, the
keyboard order is the document's, focus is visible; at 360 px nothing scrolls sideways. Every
request the console makes is an operation of openapi.yaml.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import sync_playwright, expect

ROOT = Path(__file__).resolve().parents[2]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"  FAIL {message}", flush=True)


def step(text):
    print(f"- {text}", flush=True)


# --- the API the console may call -----------------------------------------------------------------

def openapi_operations(base, page):
    document = page.request.get(f"{base}/openapi.json").json()
    operations = []
    for path, item in document["paths"].items():
        for method in item:
            if method in ("get", "put", "post", "delete", "patch"):
                pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"
                operations.append((method.upper(), path, re.compile(pattern)))
    return operations


def operation_of(operations, method, path):
    for candidate_method, template, pattern in operations:
        if candidate_method == method and pattern.match(path):
            return template
    return None


def check_declared_routes(operations):
    """Every route api.js lists (the only ones `call` lets through) is in the OpenAPI document."""
    source = (ROOT / "console/js/api.js").read_text()
    listed = re.search(r"export const ROUTES = \[(.*?)\];", source, re.S).group(1)
    declared = {(m.upper(), p) for m, p, _ in operations}
    for method, path in re.findall(r'"(GET|PUT|POST|DELETE|PATCH) ([^"]+)"', listed):
        check((method, path) in declared, f"api.js lists {method} {path}, which openapi.yaml does not have")


def check_no_import_cycle():
    """The console's modules import each other without a cycle (the shell imports the views; the
    views import the session and the navigation, never the shell)."""
    folder = ROOT / "console/js"
    graph = {}
    for file in folder.rglob("*.js"):
        imports = re.findall(r'^import .*? from "(\.{1,2}/[^"]+)";', file.read_text(), re.M)
        graph[file.resolve()] = [(file.parent / target).resolve() for target in imports]
    state = {}

    def visit(node, trail):
        state[node] = "open"
        for target in graph.get(node, []):
            if state.get(target) == "open":
                cycle = trail[trail.index(target):] + [target] if target in trail else [node, target]
                check(False, "the console's modules import in a cycle: " + " -> ".join(str(p.relative_to(folder)) for p in cycle))
            elif target not in state:
                visit(target, trail + [target])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])


# --- accessibility ------------------------------------------------------------------------------

axe = Axe()


def accessible(page, view):
    results = axe.run(page)
    serious = [v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]
    for violation in serious:
        nodes = ", ".join(n["target"][0] if isinstance(n["target"][0], str) else str(n["target"]) for n in violation["nodes"][:3])
        check(False, f"{view}: axe {violation['impact']} {violation['id']}: {violation['help']} ({nodes})")
    return results


TABBABLES = """() => {
  const selector = 'a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';
  return [...document.querySelectorAll(selector)].filter((e) => {
    const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return !e.classList.contains('skip-link') && !e.closest('[hidden]') && s.visibility !== 'hidden' && s.display !== 'none' && (r.width > 0 || r.height > 0) && e.tabIndex >= 0;
  }).map((e, i) => { e.dataset.tabOrder = String(i); return i; }).length;
}"""


def keyboard_order(page, view, limit=40):
    """Tab walks the controls in document order, each one visibly focused."""
    total = page.evaluate(TABBABLES)
    # From the skip link, the first stop of every page (Chromium starts a Tab from where focus was).
    page.evaluate("() => { window.scrollTo(0, 0); document.querySelector('.skip-link').focus(); }")
    seen = []
    for _ in range(limit * 3):
        if len(set(seen)) >= min(total, limit):
            break
        page.keyboard.press("Tab")
        info = page.evaluate("""() => { const e = document.activeElement; const s = getComputedStyle(e);
          return { order: e.dataset.tabOrder ?? null, tag: e.tagName, outline: s.outlineStyle, width: s.outlineWidth, skip: e.classList.contains('skip-link') }; }""")
        if info["skip"]:
            continue
        if info["order"] is None:
            break
        if seen and seen[-1] == int(info["order"]):
            continue  # a date field's own parts (day, month, year, time) take Tabs of their own
        seen.append(int(info["order"]))
        check(info["outline"] != "none" and info["width"] != "0px", f"{view}: focus not visible on a {info['tag']}")
    expected = list(range(len(seen)))
    check(seen == expected and len(seen) >= min(total, limit) - 1, f"{view}: keyboard order {seen[:15]}… is not the document's ({total} controls)")


def review(page, view, screenshots, name):
    """The checks every view gets, and its screenshot."""
    accessible(page, view)
    if screenshots:
        page.screenshot(path=str(Path(screenshots) / f"{name}.png"), full_page=True)
    keyboard_order(page, view)


def no_sideways_scroll(page, view):
    width = page.evaluate("() => document.documentElement.scrollWidth")
    check(width <= 361, f"{view} at 360 px: the page is {width} px wide")


# --- the story ----------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--screenshots")
    parser.add_argument("--inspection", help="the in-process emulator's inspection API, to read the payload APNs got")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    arguments = parser.parse_args()
    base, console = arguments.base, f"{arguments.base}/console"
    shots = arguments.screenshots
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="console-test-"))
    p8 = work / "AuthKey_CONSOLE001.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(p8)], check=True)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=arguments.chromium, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        operations = openapi_operations(base, page)
        check_declared_routes(operations)
        check_no_import_cycle()
        called = []
        page_errors = []

        def on_request(request):
            path = request.url.removeprefix(base).split("?")[0]
            if path.startswith("/v1/") or path == "/v1":
                called.append((request.method, path))
                check(operation_of(operations, request.method, path) is not None, f"the console called {request.method} {path}, not in openapi.yaml")
            else:
                check(path.startswith("/console") or path.startswith("/openapi"), f"the console fetched {path}")

        page.on("request", on_request)
        page.on("pageerror", lambda error: page_errors.append(str(error)))
        page.on("console", lambda message: page_errors.append(message.text) if message.type == "error" and "401" not in message.text and "422" not in message.text else None)

        step("the console's files: CSP, ETag, 304")
        answer = page.request.get(console)
        csp = answer.headers.get("content-security-policy", "")
        check("default-src 'self'" in csp and "'unsafe-inline'" not in csp, f"CSP is {csp!r}")
        check(answer.headers.get("content-type", "").startswith("text/html"), "index.html's content type")
        script = page.request.get(f"{console}/js/app.js")
        check(script.headers.get("content-type", "").startswith("text/javascript"), "app.js's content type")
        etag = script.headers.get("etag")
        again = page.request.get(f"{console}/js/app.js", headers={"If-None-Match": etag or '""'})
        check(again.status == 304, f"a revalidation answered {again.status}, not 304")
        check(page.request.get(f"{console}/console.css").headers.get("content-type", "").startswith("text/css"), "console.css's content type")

        step("sign in: a wrong key is refused with its problem document")
        page.goto(console)
        page.get_by_label("API key").fill("mq_nothing_wrong")
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator(".problem")).to_contain_text("A valid API key is required")
        review(page, "sign-in", shots, "sign-in")
        page.get_by_label("API key").fill(arguments.key)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Apps and keys")).to_be_visible()
        check(page.get_by_role("link", name="Events").count() == 0, "a deployment key sees Events")
        cookies = context.cookies()
        check(cookies == [], f"the console set cookies: {cookies}")

        step("create an app, install its .p8, create a publisher key")
        page.get_by_label("Name").fill("Console Scores")
        page.get_by_label("Bundle ID").fill(f"com.example.console.{arguments.store}")
        page.get_by_label("Team ID").fill("CONSOLE001")
        page.get_by_role("button", name="Create app").click()
        expect(page.get_by_role("heading", name="Console Scores")).to_be_visible()
        page.get_by_label(".p8 file").set_input_files(str(p8))
        expect(page.get_by_label("Key ID")).to_have_value("CONSOLE001")
        page.get_by_role("button", name="Install the signing key").click()
        expect(page.get_by_role("button", name="Replace the signing key")).to_be_visible()
        page.get_by_role("link", name="Apps and keys").click()
        expect(page.get_by_role("link", name="Console Scores")).to_be_visible()
        review(page, "apps", shots, "apps")
        page.get_by_role("link", name="Console Scores").click()
        page.get_by_label("Role").select_option("publisher")
        page.get_by_role("button", name="Create key").click()
        expect(page.get_by_test_id("new-key")).to_contain_text("mq_")
        # The list shows the new key at once, not "No key yet." until a reload.
        prefix = page.get_by_test_id("new-key").inner_text().split("_")[1]
        expect(page.get_by_role("table", name="API keys")).to_contain_text(prefix)
        expect(page.locator("section[aria-labelledby=keys]")).not_to_contain_text("No key yet.")
        review(page, "app", shots, "app-and-keys")
        page.get_by_role("button", name="Sign in with this publisher key").click()
        expect(page.get_by_role("heading", name="Events")).to_be_visible()
        check(page.get_by_role("link", name="Apps and keys").count() == 0, "a publisher key sees Apps and keys")

        step("an event key the API refuses is refused in its field, by the API's own rule")
        event_key = page.get_by_label("Event key")
        event_key.fill("ars~che")
        check(not event_key.evaluate("e => e.validity.valid"), "the event key field takes ars~che, which the API refuses")
        check(event_key.get_attribute("maxlength") == "200", f"the event key's length limit is {event_key.get_attribute('maxlength')}, the API's is 200")
        hint = page.locator("#" + event_key.get_attribute("aria-describedby"))
        expect(hint).to_contain_text("1–200 characters")
        expect(hint).to_contain_text(":")
        # With the browser's checks off, the server's 422 (a parameter: no pointer) is shown, not dropped.
        page.get_by_label("Title").fill("Arsenal v Chelsea")
        page.locator("form:has(#" + event_key.get_attribute("id") + ")").evaluate("form => { form.noValidate = true; }")
        page.get_by_role("button", name="Create the event").click()
        expect(page.locator(".problem")).to_contain_text("eventKey")
        check(event_key.get_attribute("aria-invalid") == "true", "the event key field is not marked invalid after the server refused it")

        step("create an event")
        page.get_by_label("Event key").fill("ars-che-console")
        page.get_by_label("Title").fill("Arsenal v Chelsea")
        page.get_by_role("button", name="Create the event").click()
        expect(page.get_by_role("heading", name="Arsenal v Chelsea")).to_be_visible()
        expect(page.get_by_test_id("channel-sandbox")).not_to_have_text("—")

        step("add 200 virtual iPhones and register their tokens")
        page.get_by_role("link", name="Devices").click()
        page.get_by_label("How many").fill("200")
        # Their push-to-start tokens, for the devices' own reports once the start is on their Lock Screens.
        with page.expect_response(lambda response: response.url.endswith("/v1/emulator/devices") and response.request.method == "POST") as added:
            page.get_by_role("button", name="Add virtual iPhones").click()
        added_devices = added.value.json()["devices"]
        expect(page.locator(".notice")).to_contain_text("200 virtual iPhones added; 200 push-to-start tokens registered")
        expect(page.get_by_test_id("wall-summary")).to_contain_text("200 virtual iPhones")

        step("start, with the audience's size first and live progress to the end")
        page.get_by_role("link", name="Events").click()
        page.get_by_role("link", name="Arsenal v Chelsea").click()
        # The event page in sections: the overview first, each other a click away.
        expect(page.get_by_role("heading", name="Channels")).to_be_visible()
        check(not page.get_by_role("button", name="Start the Live Activity").is_visible(), "the event page shows every section at once")
        page.get_by_role("navigation", name="Event sections").get_by_role("link", name="Start", exact=True).click()
        expect(page.get_by_test_id("audience-size")).to_have_text("200 devices")
        check(not page.get_by_role("heading", name="Channels").is_visible(), "the start section shows the overview too")
        review(page, "event", shots, "event")
        # Before the first start the delivery chart says why it is empty.
        event_sections = page.get_by_role("navigation", name="Event sections")
        event_sections.get_by_role("link", name="Delivery", exact=True).click()
        expect(page.get_by_test_id("funnel-empty")).to_contain_text("No start sent yet")
        event_sections.get_by_role("link", name="Start", exact=True).click()
        page.get_by_role("button", name="Start the Live Activity").click()
        expect(page.get_by_test_id("job-state")).to_have_text("succeeded", timeout=120_000)
        expect(page.get_by_test_id("job-accepted")).to_have_text("200")
        expect(page.get_by_test_id("job-failed")).to_have_text("0")
        # The page learnt the end from the job's server-sent events, not from a reload.
        expect(page.locator("section.job")).to_contain_text("Finished: succeeded.")
        # Live from the first accepted start, shown without a reload.
        expect(page.locator("main .badge").first).to_have_text("live")
        if shots:
            page.locator("section.job").screenshot(path=str(Path(shots) / "start-progress.png"))

        step("the delivery funnel over time: the chart shows the API's numbers as devices report")
        publisher = page.evaluate("() => sessionStorage.getItem('marquee.console.apiKey')")
        auth = {"Authorization": f"Bearer {publisher}"}
        screens = page.request.get(f"{base}/v1/emulator/lock-screens?environment=sandbox&limit=1000", headers=auth).json()["devices"]
        activity_of = {screen["deviceID"]: screen.get("activityID") for screen in screens}
        # 50 devices say the activity is on their Lock Screen, 10 that it ended (as MarqueeKit reports).
        for index, device in enumerate(added_devices[:60]):
            state = "showing" if index < 50 else "ended"
            report = {"environment": "sandbox", "state": state, "activityID": activity_of.get(device["deviceID"]) or f"console-activity-{index}"}
            answer = page.request.put(f"{base}/v1/events/ars-che-console/presence/{device['pushToStartToken']}", headers=auth, data=report)
            check(answer.status == 200, f"a presence report answered {answer.status}: {answer.text()}")
        event_sections.get_by_role("link", name="Delivery", exact=True).click()
        delivery = page.locator("section[aria-labelledby=delivery]")
        # The section reads the funnel again every few seconds: the reports arrive without a reload.
        expect(page.get_by_test_id("funnel-sandbox-confirmedShowing")).to_have_text("50", timeout=30_000)
        expect(page.get_by_test_id("funnel-sandbox-ended")).to_have_text("10", timeout=30_000)
        series = page.request.get(f"{base}/v1/events/ars-che-console/funnel/series", headers=auth).json()
        points = series["environments"][0]["points"]
        last = points[-1]
        check([last["sent"], last["accepted"], last["confirmedShowing"], last["ended"]] == [200, 200, 50, 10], f"the API's last point is {last}")
        for key in ["sent", "accepted", "confirmedShowing", "ended", "lateJoinersStarted"]:
            shown = page.get_by_test_id(f"funnel-sandbox-{key}").inner_text()
            check(shown == f"{last[key]:,}", f"the chart's table shows {key} {shown}, the API {last[key]}")
        expect(page.get_by_test_id("funnel-total-sandbox-accepted")).to_have_text("200")
        chart = page.get_by_test_id("funnel-chart-sandbox")
        expect(chart).to_have_attribute("aria-label", re.compile(r"devices as of .*: 200 sent, 200 accepted by APNs, 50 confirmed on devices$"))
        # One vertex per point after the origin's zero, for each of the three lines; a line drawn
        # higher (a smaller y) counts more devices. The series' buckets run from the first send to
        # the moment it is read (a second each this early), so the chart, which reads it every 5 s,
        # is a few points behind any read made here: the chart is held to the points it was given
        # (data-points, read with its lines in one evaluation, as it may redraw between two reads),
        # and those to a read made after it, which has at least as many.
        lines = ["sent", "accepted", "confirmedShowing"]
        drawing = chart.evaluate(
            "svg => ({ points: Number(svg.dataset.points), lines: Object.fromEntries("
            "[...svg.querySelectorAll('polyline[data-series]')].map((line) => [line.dataset.series, line.getAttribute('points')]))})"
        )
        later = page.request.get(f"{base}/v1/events/ars-che-console/funnel/series", headers=auth).json()["environments"][0]["points"]
        check(0 < drawing["points"] <= len(later), f"the chart drew {drawing['points']} points, a later read has {len(later)}")
        tops = {}
        for key in lines:
            vertices = drawing["lines"][key].split()
            check(len(vertices) == drawing["points"] + 1, f"the {key} line has {len(vertices)} vertices for {drawing['points']} points")
            tops[key] = float(vertices[-1].split(",")[1])
        check(tops["sent"] == tops["accepted"] < tops["confirmedShowing"], f"the lines end at heights {tops}")
        accessible(page, "delivery")
        if shots:
            delivery.screenshot(path=str(Path(shots) / "funnel-chart.png"))

        step("broadcast a goal from the composer")
        sections = page.get_by_role("navigation", name="Event sections")
        sections.get_by_role("link", name="Broadcast", exact=True).click()
        # The start's progress stayed with its job while another section is shown.
        composer = page.locator("section[aria-labelledby=composer]")
        state = {"homeScore": 1, "awayScore": 0, "period": "1st half", "clock": "12'", "lastEvent": "GOAL Saka 12'"}
        # Nothing sent yet: fields of the default shape, the JSON one click away.
        check(composer.get_by_label("homeScore", exact=True).get_attribute("type") == "number", "the composer's homeScore is not a number field")
        composer.get_by_role("button", name="Edit as raw JSON").click()
        composer.get_by_label("Content-state (JSON)").fill(json.dumps(state))
        expect(composer.get_by_label("lastEvent", exact=True)).to_have_value("GOAL Saka 12'")
        composer.get_by_label("Alert title").fill("Goal!")
        composer.get_by_label("Alert body").fill("Saka scores")
        preview = page.get_by_test_id("payload-preview")
        expect(preview).to_contain_text('"content-state":{"awayScore":0,"clock":"12\'","homeScore":1,"lastEvent":"GOAL Saka 12\'","period":"1st half"}')
        expect(page.get_by_test_id("payload-size")).to_contain_text("of APNs' 5,120-byte limit")
        if shots:
            composer.screenshot(path=str(Path(shots) / "composer.png"))
        previewed = preview.inner_text()
        channel_id = page.get_by_test_id("channel-sandbox").text_content()
        # The device wall open in a second tab (the key is per tab: session storage), to see the alert arrive.
        wall = context.new_page()
        wall.on("request", on_request)
        wall.on("pageerror", lambda error: page_errors.append(str(error)))
        wall.add_init_script(f"sessionStorage.setItem('marquee.console.apiKey', {json.dumps(page.evaluate('() => sessionStorage.getItem(`marquee.console.apiKey`)'))})")
        wall.goto(f"{console}#/devices")
        expect(wall.get_by_test_id("wall-summary")).to_contain_text("200 virtual iPhones")
        check(wall.get_by_test_id("alert-banner").count() == 0, "the wall shows the start's alert, which arrived before it was opened, as a new banner")
        composer.get_by_role("button", name="Broadcast").click()
        expect(composer.locator("table")).to_contain_text("accepted")
        # The wall: the goal's banner on the Lock Screens, the score on the activity and in the Dynamic Island.
        expect(wall.get_by_test_id("alert-banner").first).to_contain_text("Goal!", timeout=30_000)
        expect(wall.get_by_test_id("alert-banner").first).to_contain_text("Saka scores")
        expect(wall.locator(".island").first).to_contain_text("ARS 1")
        if shots:
            wall.locator(".wall li").first.screenshot(path=str(Path(shots) / "lock-screen-alert.png"))
        wall.close()
        # The confirmation: APNs' answer and its latency.
        confirmation = composer.get_by_role("table", name="Broadcast results")
        check(float(confirmation.locator("td.num").nth(1).inner_text()) > 0, "the confirmation shows no latency")
        confirmation_element = confirmation.element_handle()
        if arguments.inspection:
            # The preview is the body APNs got, byte for byte but for aps.timestamp.
            pushes = page.request.get(f"{arguments.inspection}/v1/sandbox/pushes/{quote(channel_id, safe='')}").json()
            sent = pushes[-1]["payload"] if pushes else ""
            strip = lambda text: re.sub(r'"timestamp":\d+', '"timestamp":T', text)
            check(strip(sent) == strip(previewed), f"the preview {previewed!r} is not the payload sent {sent!r}")

        step("read the log")
        sections.get_by_role("link", name="Broadcast log", exact=True).click()
        log = page.locator("section[aria-labelledby=log]")
        expect(log.locator("tbody tr")).to_have_count(1, timeout=15_000)
        # The log was read again in place: the confirmation is still there, not wiped by a reload.
        check(confirmation_element.evaluate("e => e.isConnected"), "the broadcast's confirmation went with a reload of the page")
        expect(log).to_contain_text("GOAL Saka")
        expect(log.get_by_test_id("log-alert").first).to_have_text("Goal! Saka scores")
        latency = float(log.get_by_test_id("log-latency").first.inner_text())
        check(latency > 0, f"the log's latency is {latency}")
        # The composer now checks against the goal's shape.
        sections.get_by_role("link", name="Broadcast", exact=True).click()
        composer = page.locator("section[aria-labelledby=composer]")
        expect(composer).to_contain_text("Same shape as the content-state last sent")
        # Its fields are the goal's: a number stays a number, a string offers the values sent before.
        home = composer.get_by_label("homeScore", exact=True)
        expect(home).to_have_value("1")
        home.fill("2")
        expect(preview).to_contain_text('"homeScore":2')
        check(composer.locator("datalist option[value='1st half']").count() == 1, "the period field does not offer the value sent before")
        composer.get_by_label("Content-state (JSON)").fill('{"homeScore": "one"}')
        expect(composer.locator(".warning")).to_contain_text("/homeScore is string, last sent as integer")
        if shots:
            sections.get_by_role("link", name="Broadcast log", exact=True).click()
            log.screenshot(path=str(Path(shots) / "broadcast-log.png"))

        step("the device wall shows the score")
        page.get_by_role("link", name="Devices").click()
        expect(page.get_by_test_id("wall-group").first).to_have_text("LIVE  Arsenal 1 - 0 Chelsea  1st half  12'", timeout=30_000)
        screen = page.locator(".wall .phone").first
        expect(screen.locator(".lockscreen.activity")).to_contain_text("GOAL Saka 12'")
        expect(screen.locator(".lockscreen.activity")).to_contain_text("Premier League")
        expect(screen).to_have_attribute("aria-label", re.compile(r"LIVE Arsenal 1 - 0 Chelsea, 1st half  12', GOAL Saka 12'"))
        review(page, "devices", shots, "device-wall")

        step("jobs and channels")
        page.get_by_role("link", name="Jobs").click()
        expect(page.get_by_role("cell", name="activity.start")).to_be_visible()
        review(page, "jobs", shots, "jobs")
        page.locator("table a code").first.click()
        expect(page.get_by_test_id("job-state")).to_have_text("succeeded")
        accessible(page, "job")
        page.get_by_role("link", name="Channels").click()
        page.get_by_role("button", name="Reconcile with APNs").click()
        expect(page.get_by_role("heading", name="Reconciled sandbox")).to_be_visible()
        review(page, "channels", shots, "channels")

        step("end the event: the final state, then close it")
        page.get_by_role("link", name="Events").click()
        # The list, not the "Loading…" before it: a review begun before the view renders walks
        # controls its render then replaces (on a busy machine: "keyboard order [0, 1]…").
        expect(page.get_by_role("table", name="Events", exact=True)).to_be_visible()
        review(page, "events", shots, "events")
        page.get_by_role("link", name="Arsenal v Chelsea").click()
        sections = page.get_by_role("navigation", name="Event sections")
        sections.get_by_role("link", name="Broadcast", exact=True).click()
        composer = page.locator("section[aria-labelledby=composer]")
        composer.get_by_label("Kind").select_option("end")
        final = {"homeScore": 2, "awayScore": 1, "period": "Full time", "clock": "90+4'", "lastEvent": "GOAL Rice 84'"}
        composer.get_by_role("button", name="Edit as raw JSON").click()
        composer.get_by_label("Content-state (JSON)").fill(json.dumps(final))
        composer.get_by_role("button", name="Broadcast").click()
        expect(composer.locator("table")).to_contain_text("accepted")
        sections.get_by_role("link", name="Overview", exact=True).click()
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Close the event").click()
        expect(page.locator(".badge").first).to_have_text("ended")
        # A closed event says what can be done now: a new event, not "put it again" (a 409).
        expect(page.get_by_test_id("no-channel")).to_contain_text("create a new event with another key")
        page.get_by_role("link", name="Devices").click()
        expect(page.get_by_test_id("wall-group").first).to_have_text("ENDED  Arsenal 2 - 1 Chelsea  Full time  90+4'", timeout=30_000)

        step("at 360 px wide")
        phone = browser.new_context(viewport={"width": 360, "height": 780})
        mobile = phone.new_page()
        mobile.on("request", on_request)
        publisher_key = page.evaluate("() => sessionStorage.getItem('marquee.console.apiKey')")
        mobile.goto(console)
        mobile.get_by_label("API key").fill(publisher_key)
        mobile.get_by_role("button", name="Sign in").click()
        expect(mobile.get_by_role("heading", name="Events")).to_be_visible()
        no_sideways_scroll(mobile, "events")
        accessible(mobile, "events at 360 px")
        if shots:
            mobile.screenshot(path=str(Path(shots) / "events-360px.png"), full_page=False)
        mobile.get_by_role("link", name="Arsenal v Chelsea").click()
        expect(mobile.get_by_role("heading", name="Arsenal v Chelsea")).to_be_visible()
        no_sideways_scroll(mobile, "event")
        mobile.get_by_role("link", name="Devices").click()
        expect(mobile.get_by_test_id("wall-group").first).to_be_visible()
        no_sideways_scroll(mobile, "devices")
        mobile.get_by_role("heading", name="What they show").scroll_into_view_if_needed()
        if shots:
            mobile.screenshot(path=str(Path(shots) / "device-wall-360px.png"), full_page=False)
        phone.close()

        step("sign out; a key that stops working returns to sign-in")
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        check(page.evaluate("() => sessionStorage.length") == 0, "the key stayed in session storage after sign-out")
        page.evaluate("() => sessionStorage.setItem('marquee.console.apiKey', 'mq_revoked_key')")
        page.goto(f"{console}#/events")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        expect(page.locator(".problem")).to_contain_text("A valid API key is required")

        for error in page_errors:
            check(False, f"the page logged an error: {error}")
        check(len(called) > 20, f"only {len(called)} API calls were seen")
        browser.close()

    if failures:
        print(f"console tests ({arguments.store}): {len(failures)} failure(s)")
        for failure in failures:
            print(f"  - {failure}")
        return 1
    print(f"console tests ({arguments.store}): passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
