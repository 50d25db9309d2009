// Events: the list with state, planned times, channel IDs per environment and the channel quota;
// the form that creates or edits one (PUT /v1/events/{eventKey}).
import { call } from "../api.js";
import { h, clear, field, input, select, checkbox, problemBox, badge, when, table, localInput, fromLocalInput, announce, count } from "../dom.js";
import { can } from "../session.js";
import { navigate } from "../navigation.js";
import { bodyRule, parameterRule } from "../schema.js";

const PUT_EVENT = "PUT /v1/events/{eventKey}";

export async function eventsView(main, { signal }) {
  const events = (await call("GET", "/v1/events?limit=200", undefined, { signal })).events;
  const quotas = can.publish ? (await call("GET", "/v1/channels/quota", undefined, { signal })).quotas : [];
  const rows = events.map((event) => h("tr", {},
    h("td", {}, h("a", { href: `#/events/${encodeURIComponent(event.eventKey)}` }, event.title), h("br"), h("code", {}, event.eventKey)),
    h("td", {}, badge(event.state)),
    h("td", {}, when(event.plannedStart), " – ", when(event.plannedEnd)),
    h("td", {}, event.channels.length ? event.channels.map((channel) => h("div", {}, `${channel.environment}: `, h("code", {}, channel.channelID ?? channel.state))) : h("span", { class: "muted" }, "none"))));
  clear(main,
    h("h1", {}, "Events"),
    quotas.length ? h("dl", { class: "stats", "aria-label": "Channel quota" }, quotas.map((quota) =>
      h("div", { class: "stat" }, h("dt", {}, `Channels, ${quota.environment}`), h("dd", {}, `${count(quota.used)} of ${count(quota.limit)}`), quota.warning ? h("dd", { class: "hint" }, "past the warning level") : null))) : null,
    events.length ? table(["Event", "State", "Planned", "Channel IDs"], rows, "Events") : h("p", {}, "No event yet."),
    can.publish ? eventForm(null) : null);
}

/** Creates an event, or edits `event` (its key fixed). */
export function eventForm(event) {
  const status = h("div");
  const start = event ? new Date(event.plannedStart) : new Date(Date.now() + 5 * 60_000);
  const end = event ? new Date(event.plannedEnd) : new Date(start.getTime() + 2 * 3600_000);
  const key = input("eventKey", { required: true, placeholder: "ars-che-2026-11-28", value: event?.eventKey, readonly: !!event });
  const form = h("form", { onsubmit: async (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    const body = {
      title: data.get("title"),
      attributesType: data.get("attributesType"),
      environments: data.getAll("environments"),
      plannedStart: fromLocalInput(data.get("plannedStart")),
      plannedEnd: fromLocalInput(data.get("plannedEnd")),
      storagePolicy: data.get("storagePolicy"),
    };
    if (data.get("priorityPolicy")) body.priorityPolicy = data.get("priorityPolicy");
    if (event?.timeline) body.timeline = event.timeline;
    try {
      const saved = await call("PUT", `/v1/events/${encodeURIComponent(key.value.trim())}`, body);
      announce(`Event ${saved.title} saved`);
      navigate(`#/events/${encodeURIComponent(saved.eventKey)}`);
    } catch (error) {
      clear(status, problemBox(error, form));
    }
  } },
  h("div", { class: "row" },
    field("Event key", key, { parameter: "eventKey", rule: parameterRule(PUT_EVENT, "eventKey") }),
    field("Title", input("title", { required: true, placeholder: "Arsenal v Chelsea", value: event?.title }), { pointer: "/title", rule: bodyRule(PUT_EVENT, "/title") }),
    field("Attributes type", input("attributesType", { required: true, value: event?.attributesType ?? "MatchAttributes" }), { pointer: "/attributesType", rule: bodyRule(PUT_EVENT, "/attributesType") })),
  h("div", { class: "row" },
    field("Planned start", h("input", { type: "datetime-local", name: "plannedStart", required: true, value: localInput(start) }), { pointer: "/plannedStart" }),
    field("Planned end", h("input", { type: "datetime-local", name: "plannedEnd", required: true, value: localInput(end) }), { pointer: "/plannedEnd" }),
    field("Storage policy", select("storagePolicy", [["mostRecentMessage", "Most recent message (offline devices get it)"], ["noStorage", "No storage"]], event?.storagePolicy ?? "mostRecentMessage"), { pointer: "/storagePolicy" }),
    field("Priority policy", select("priorityPolicy", [["", "Server default"], ["standard", "Standard (10 with an alert)"], ["immediate", "Immediate (always 10)"], ["normal", "Normal (5 unless important)"]], event?.priorityPolicy ?? ""), { pointer: "/priorityPolicy" })),
  h("fieldset", { "data-pointer": "/environments" }, h("legend", {}, "Environments (a channel each)"),
    checkbox("Sandbox", "environments", !event || event.environments.includes("sandbox"), "sandbox"),
    checkbox("Production", "environments", !!event?.environments.includes("production"), "production")),
  h("div", { class: "actions" }, h("button", { type: "submit" }, event ? "Save the event" : "Create the event")));
  const id = event ? "edit-event" : "create-event";
  return h("section", { class: "panel", "aria-labelledby": id }, h("h2", { id }, event ? "Edit the event" : "Create an event"), status, form);
}
