// Channels at APNs: the quota per environment, the app's channels, and reconciliation with
// APNs' own list and what it found.
import { call } from "../api.js";
import { h, clear, field, select, checkbox, problemBox, badge, when, table, count, announce, stat } from "../dom.js";

export async function channelsView(main, { signal }) {
  const quotas = (await call("GET", "/v1/channels/quota", undefined, { signal })).quotas;
  const channels = (await call("GET", "/v1/channels?limit=200", undefined, { signal })).channels;
  const rows = channels.map((channel) => h("tr", {},
    h("td", {}, channel.eventKey ? h("a", { href: `#/events/${encodeURIComponent(channel.eventKey)}` }, channel.eventKey) : h("span", { class: "muted" }, "orphan")),
    h("td", {}, channel.environment), h("td", {}, h("code", {}, channel.channelID ?? "—")), h("td", {}, badge(channel.state)), h("td", {}, when(channel.updatedAt))));
  const status = h("div");
  const report = h("div");
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      const found = await call("POST", "/v1/channels/reconcile", { environment: data.get("environment"), deleteOrphans: data.get("deleteOrphans") === "yes" });
      clear(status);
      const list = (items) => items.length ? h("ul", {}, items.map((item) => h("li", {}, h("code", {}, item)))) : " none";
      clear(report, h("h3", {}, `Reconciled ${found.environment}`),
        h("dl", { class: "stats" },
          stat("APNs lists", found.apnsChannels), stat("Unchanged", found.unchanged),
          stat("Orphans recorded", found.orphansRecorded.length), stat("Orphans deleted", found.orphansDeleted.length), stat("Marked deleted", found.markedDeleted.length)),
        h("p", {}, "Orphans recorded (APNs knew, Marquee did not):", list(found.orphansRecorded)),
        h("p", {}, "Orphans deleted at APNs:", list(found.orphansDeleted)),
        h("p", {}, "Marked deleted (APNs no longer lists them):", list(found.markedDeleted)));
      announce("Reconciliation done");
    } catch (error) {
      clear(status, problemBox(error, form));
    }
  } },
  h("div", { class: "row" },
    field("Environment", select("environment", [["sandbox", "sandbox"], ["production", "production"]], "sandbox"), { pointer: "/environment" })),
  checkbox("Delete orphans at APNs now (instead of after the grace period)", "deleteOrphans", false, "yes"),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Reconcile with APNs")));
  clear(main,
    h("h1", {}, "Channels"),
    h("dl", { class: "stats", "aria-label": "Channel quota" }, quotas.map((quota) => stat(`Quota, ${quota.environment}`, `${count(quota.used)} of ${count(quota.limit)}${quota.warning ? " (warning)" : ""}`))),
    channels.length ? table(["Event", "Environment", "Channel ID", "State", "Updated"], rows, "Channels") : h("p", {}, "No channel yet: creating an event makes one per environment."),
    h("section", { class: "panel", "aria-labelledby": "reconcile" }, h("h2", { id: "reconcile" }, "Reconcile with APNs"), status, form, report));
}

