// The device wall: with the APNs emulator, what each virtual iPhone's Lock Screen shows now, as iOS
// draws a Live Activity (lockScreen.js, from GET /v1/emulator/lock-screens), refreshed every 2 s,
// an alert's banner shown for a few seconds when one arrives; and
// virtual iPhones added with their push-to-start tokens registered (POST /v1/emulator/devices,
// then POST /v1/push-to-start-tokens/batch, as an app would).
import { call } from "../api.js";
import { h, clear, field, input, select, problemBox, count, announce, notice } from "../dom.js";
import { can, session } from "../session.js";
import { lockScreen } from "../lockScreen.js";
import { bodyRule } from "../schema.js";

const ADD_DEVICES = "POST /v1/emulator/devices";

const SHOWN = 24;
/** How long an alert's banner stays on a Lock Screen after it arrived. */
const BANNER_MILLISECONDS = 8000;

export async function devicesView(main, { signal }) {
  const environments = session.me.app?.environments ?? ["sandbox", "production"];
  let environment = environments[0];
  let showAll = false;
  const summary = h("div", { "aria-live": "polite", "data-testid": "wall-summary" });
  const wall = h("ul", { class: "wall", "aria-label": "Lock Screens" });
  const more = h("button", { type: "button", class: "secondary", onclick: () => { showAll = !showAll; draw(); } });
  const pick = select("environment", environments.map((env) => [env, env]), environment);
  pick.addEventListener("change", () => { environment = pick.value; draw(); });
  let last = "";
  /** Per device: the alert last seen and when it arrived (not on the first draw: those are old). */
  const alerts = new Map();
  let firstDraw = true;
  const appName = session.me.app?.name ?? "Live Activity";

  async function draw() {
    let answer;
    try {
      answer = await call("GET", `/v1/emulator/lock-screens?environment=${environment}&limit=1000`, undefined, { signal });
    } catch (error) {
      if (error.name !== "AbortError") clear(summary, problemBox(error));
      return;
    }
    const devices = answer.devices;
    const groups = new Map();
    for (const device of devices) {
      const label = device.status ? `${device.status}  ${device.homeTeam} ${device.score} ${device.awayTeam}  ${device.clock}` : "no Live Activity";
      groups.set(label, (groups.get(label) ?? 0) + 1);
    }
    const now = Date.now();
    for (const device of devices) {
      const seen = JSON.stringify(device.alert ?? null);
      const known = alerts.get(device.deviceID);
      if (!known || known.seen !== seen) alerts.set(device.deviceID, { seen, at: firstDraw || !device.alert ? 0 : now });
    }
    firstDraw = false;
    const bannered = (device) => now - (alerts.get(device.deviceID)?.at ?? 0) < BANNER_MILLISECONDS;
    const key = JSON.stringify([devices.map((device) => [device.lines, device.online, bannered(device)]), showAll, new Date(now).getMinutes()]);
    clear(summary,
      h("p", {}, `${count(answer.total)} virtual iPhone${answer.total === 1 ? "" : "s"} in ${environment}.`),
      groups.size ? h("table", {}, h("caption", { class: "visually-hidden" }, "What the devices show"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "num" }, "Devices"), h("th", { scope: "col" }, "Lock Screen"))),
        h("tbody", {}, [...groups].map(([label, n]) => h("tr", {}, h("td", { class: "num" }, count(n)), h("td", { class: "mono", "data-testid": "wall-group" }, label))))) : null);
    if (key === last) return;
    last = key;
    const shown = showAll ? devices : devices.slice(0, SHOWN);
    clear(wall, shown.map((device) => h("li", {}, lockScreen(device, { appName, banner: bannered(device), now: new Date(now) }))));
    more.hidden = devices.length <= SHOWN;
    more.textContent = showAll ? `Show the first ${SHOWN}` : `Show all ${count(devices.length)}`;
  }

  clear(main,
    h("h1", {}, "Devices"),
    h("p", {}, "The APNs emulator's virtual iPhones, each showing its Lock Screen and Dynamic Island live, as iOS draws the Live Activity (", h("code", {}, "marquee demo"), " draws the same in a terminal)."),
    h("div", { class: "row" }, field("Environment", pick)),
    can.addDevices ? addDevicesForm(() => environment, draw) : null,
    h("h2", {}, "What they show"),
    summary, wall, h("div", { class: "actions" }, more));
  await draw();
  const timer = setInterval(() => { if (!document.hidden) draw(); }, 2000);
  signal.addEventListener("abort", () => clearInterval(timer));
}

function addDevicesForm(environment, redraw) {
  // The API's limits; its description ("1 by default") speaks of the API's default, not this form's.
  const countRule = bodyRule(ADD_DEVICES, "/count");
  const status = h("div");
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const attributesType = data.get("attributesType");
    const iosVersion = data.get("iosVersion");
    const tags = String(data.get("tags") || "").split(",").map((tag) => tag.trim()).filter(Boolean);
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const created = await call("POST", "/v1/emulator/devices", { environment: environment(), count: Number(data.get("count")), iosVersion, attributesType });
      const tokens = created.devices.map((device) => ({ token: device.pushToStartToken, environment: device.environment, attributesType, deviceID: device.deviceID, iosVersion: device.iosVersion, tags: tags.length ? tags : undefined }));
      const registered = await call("POST", "/v1/push-to-start-tokens/batch", { tokens });
      clear(status, notice(`${count(created.devices.length)} virtual iPhones added; ${count(registered.registered)} push-to-start tokens registered.`));
      announce(`${created.devices.length} devices added`);
      redraw();
    } catch (error) {
      clear(status, problemBox(error, form));
    } finally {
      button.disabled = false;
    }
  } },
  h("div", { class: "row" },
    field("How many", input("count", { type: "number", value: 200, required: true }), { pointer: "/count", rule: countRule, hint: `${count(countRule.minimum)} to ${count(countRule.maximum)} at a time.` }),
    field("iOS version", select("iosVersion", [["18.0", "iOS 18.0 (channel)"], ["17.4", "iOS 17.4 (update token)"], ["17.2", "iOS 17.2 (update token)"]], "18.0"), { pointer: "/iosVersion" }),
    field("Attributes type", input("attributesType", { value: "MatchAttributes", required: true }), { pointer: "/attributesType", rule: bodyRule(ADD_DEVICES, "/attributesType") }),
    field("Tags", input("tags", { placeholder: "arsenal" }), { hint: "Comma-separated; a start can aim at them." })),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Add virtual iPhones")));
  return h("section", { class: "panel", "aria-labelledby": "add-devices" }, h("h2", { id: "add-devices" }, "Add virtual iPhones"), status, form);
}
