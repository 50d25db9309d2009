// One event: its channels, timeline and schedules, the start form with the audience's size, the
// job's live progress, the broadcast composer, each channel's broadcast log, and the delivery
// funnel (its totals, and over time as a chart).
import { call } from "../api.js";
import { h, clear, field, input, select, problemBox, badge, when, table, count, fromLocalInput, announce, notice, stat } from "../dom.js";
import { can } from "../session.js";
import { navigate } from "../navigation.js";
import { eventForm } from "./events.js";
import { jobProgress } from "./jobs.js";
import { broadcastPayload, byteSize, shapeDifferences, BROADCAST_LIMIT } from "../payload.js";
import { stateFields } from "../stateFields.js";
import { funnelChart } from "../funnelChart.js";

const OPEN = ["scheduled", "live"];
/** How often the delivery section reads the funnel again while the event is open and the page seen. */
const DELIVERY_REFRESH_MILLISECONDS = 5000;

export async function eventView(main, eventKey, { signal, section }) {
  const path = `/v1/events/${encodeURIComponent(eventKey)}`;
  const event = await call("GET", path, undefined, { signal });
  const open = OPEN.includes(event.state);
  const readLogs = () => can.publish ? Promise.all(event.environments.map(async (environment) => {
    try {
      return { environment, log: await call("GET", `${path}/channels/${environment}/broadcasts?limit=20`, undefined, { signal }) };
    } catch (error) {
      return { environment, error };
    }
  })) : [];
  const readSchedules = async () => can.publish ? (await call("GET", `${path}/schedules?limit=100`, undefined, { signal })).schedules : [];
  const logs = await readLogs();
  const status = h("div");
  const summary = h("p", {});
  const timelineSlot = h("div");
  const logSlot = h("div");
  const delivery = can.publish ? deliverySection(path, signal) : null;
  const drawSummary = (shown) => clear(summary, badge(shown.state), " ", h("code", {}, shown.eventKey),
    ` · ${shown.attributesType} · planned ${when(shown.plannedStart)} – ${when(shown.plannedEnd)}`);
  /** After each change: the event's state, its schedules and its broadcast log read again, in place. */
  async function refresh() {
    try {
      const [now, schedules, logs] = await Promise.all([call("GET", path, undefined, { signal }), readSchedules(), readLogs()]);
      drawSummary(now);
      clear(timelineSlot, timelineSection(now, schedules, refresh));
      clear(logSlot, can.publish ? logSection(logs) : null);
      await delivery?.refresh(now);
    } catch (error) {
      if (error.name !== "AbortError") clear(status, problemBox(error));
    }
  }
  drawSummary(event);
  clear(timelineSlot, timelineSection(event, await readSchedules(), refresh));
  clear(logSlot, can.publish ? logSection(logs) : null);

  const closeButton = can.publish && open ? h("button", { type: "button", class: "danger", onclick: async () => {
    if (!confirm(`Close ${event.title}? Its channels are deleted at APNs; nothing can be sent to it afterwards.`)) return;
    try {
      await call("POST", `${path}/close`);
      announce("Event closed");
      navigate(location.hash);
    } catch (error) {
      clear(status, problemBox(error));
    }
  } }, "Close the event") : null;
  const editSlot = h("div");
  const editButton = can.publish && open ? h("button", { type: "button", class: "secondary", "aria-expanded": "false", onclick: () => {
    const expanded = editButton.getAttribute("aria-expanded") === "true";
    editButton.setAttribute("aria-expanded", String(!expanded));
    clear(editSlot, expanded ? null : eventForm(event));
  } }, "Edit") : null;

  const channelRows = event.channels.map((channel) => h("tr", {},
    h("td", {}, channel.environment), h("td", {}, h("code", { "data-testid": `channel-${channel.environment}` }, channel.channelID ?? "—")), h("td", {}, badge(channel.state)), h("td", {}, channel.storagePolicy)));

  // The page in sections, one shown at a time, so that a producer goes from the start to the
  // composer to the log without scrolling past the rest. All stay in the page: a start's
  // progress follows its job while the composer is shown.
  const sections = [
    { id: "overview", label: "Overview", content: [h("div", { class: "actions" }, editButton, closeButton), editSlot, h("h2", {}, "Channels"),
      channelRows.length ? table(["Environment", "Channel ID", "State", "Storage"], channelRows, "Channels") : noChannel(event), timelineSlot] },
    can.publish && open ? { id: "start", label: "Start", content: [startSection(event, path, signal, refresh)] } : null,
    can.publish && open ? { id: "broadcast", label: "Broadcast", content: [composerSection(event, path, logs, refresh)] } : null,
    can.publish ? { id: "log", label: "Broadcast log", content: [logSlot] } : null,
    delivery ? { id: "delivery", label: "Delivery", content: [delivery.element] } : null,
  ].filter(Boolean);
  const base = `#/events/${encodeURIComponent(event.eventKey)}`;
  let current = sections.some((candidate) => candidate.id === section) ? section : "overview";
  const links = new Map();
  const panels = new Map(sections.map((candidate) => [candidate.id, h("div", { class: "event-section", "data-section": candidate.id, hidden: candidate.id !== current }, candidate.content)]));
  const show = (id) => {
    current = id;
    for (const [candidateID, panel] of panels) panel.hidden = candidateID !== id;
    for (const [candidateID, link] of links) link.setAttribute("aria-current", String(candidateID === id));
    // The section is in the address (a reload or a shared link opens it) without drawing the page again.
    history.replaceState(null, "", `${base}/${id}`);
  };
  const sectionNav = h("nav", { class: "sections", "aria-label": "Event sections" }, h("ul", {}, sections.map((candidate) => {
    const link = h("a", { href: `${base}/${candidate.id}`, "aria-current": String(candidate.id === current), onclick: (click) => {
      click.preventDefault();
      show(candidate.id);
    } }, candidate.label);
    links.set(candidate.id, link);
    return h("li", {}, link);
  })));

  clear(main,
    h("p", {}, h("a", { href: "#/events" }, "← Events")),
    h("h1", {}, event.title),
    summary,
    status,
    sectionNav,
    [...panels.values()]);
  if (delivery) {
    await delivery.refresh(event);
    // The funnel moves while the event is open (starts, late joiners, devices' reports): read again
    // like the device wall, while the section is seen; a change on this page reads it at once (refresh).
    const timer = setInterval(() => {
      if (!document.hidden && !delivery.element.parentElement?.hidden && OPEN.includes(delivery.state())) delivery.refresh();
    }, DELIVERY_REFRESH_MILLISECONDS);
    signal.addEventListener("abort", () => clearInterval(timer));
  }
}

/** The funnel's totals per environment (from the event's GET) and the funnel over time as charts. */
function deliverySection(path, signal) {
  const body = h("div");
  const status = h("div");
  let state = "scheduled";
  let funnel = [];
  async function refresh(event) {
    try {
      if (!event) event = await call("GET", path, undefined, { signal });
      state = event.state;
      funnel = event.funnel ?? funnel;
      const series = await call("GET", `${path}/funnel/series`, undefined, { signal });
      clear(status);
      clear(body, series.environments.map((environment) => {
        const totals = funnel.find((entry) => entry.environment === environment.environment);
        return [
          series.environments.length > 1 ? h("h3", {}, environment.environment) : null,
          totals ? funnelTotals(totals) : null,
          environment.points.length
            ? funnelChart(environment, series)
            : h("p", { class: "muted", "data-testid": "funnel-empty" }, "No start sent yet: the chart of sent, accepted and confirmed devices begins with the event's first start."),
        ];
      }));
    } catch (error) {
      if (error.name !== "AbortError") clear(status, problemBox(error));
    }
  }
  const element = h("section", { "aria-labelledby": "delivery" },
    h("h2", { id: "delivery" }, "Delivery"),
    h("p", { class: "hint" }, "How far the event's starts reached, from APNs' answers to what the devices report. Read again every few seconds while the event is open."),
    status, body);
  return { element, refresh, state: () => state };
}

function funnelTotals(funnel) {
  const figure = (label, value, key, title) => stat(label, value, { testid: `funnel-total-${funnel.environment}-${key}`, title });
  return h("dl", { class: "stats" },
    figure("Targeted", funnel.targeted, "targeted", "In the audiences of the event's starts when each was created"),
    figure("Sent", funnel.sent, "sent"), figure("Accepted", funnel.accepted, "accepted"),
    figure("Rejected", funnel.rejected.devices, "rejected"), figure("Uncertain", funnel.uncertain, "uncertain", "Written to APNs with no answer"),
    figure("Failed", funnel.failed, "failed"), figure("Confirmed showing", funnel.confirmedShowing, "showing", "The app reported the activity on the Lock Screen"),
    figure("Absent", funnel.absent, "absent"), figure("Ended", funnel.ended, "ended"));
}

/** Why the event has no channel, and what can be done about it. */
function noChannel(event) {
  if (OPEN.includes(event.state)) {
    return h("p", { class: "muted" }, can.publish
      ? "No channel yet: Edit, then Save the event, to create its channels (one per environment)."
      : "No channel yet: a publisher key creates them by saving the event.");
  }
  return h("p", { class: "muted", "data-testid": "no-channel" },
    `This event is ${event.state}: its channels are deleted and nothing more can be sent to it. To go on, `,
    h("a", { href: "#/events" }, "create a new event with another key"), ".");
}

function timelineSection(event, schedules, refresh) {
  if (!can.publish) return null;
  const rows = schedules.map((schedule) => h("tr", {},
    h("td", {}, when(schedule.at)), h("td", {}, schedule.kind), h("td", {}, schedule.origin), h("td", {}, badge(schedule.state)),
    h("td", {}, schedule.outcome?.jobs?.map((job) => h("a", { href: `#/jobs/${encodeURIComponent(job)}` }, job)) ?? schedule.lastError ?? schedule.outcome?.skipped ?? ""),
    h("td", {}, schedule.state === "pending" && schedule.origin === "api" ? h("button", { type: "button", class: "secondary", "aria-label": `Cancel the ${schedule.kind} at ${when(schedule.at)}`, onclick: async (click) => {
      try {
        await call("DELETE", `/v1/schedules/${encodeURIComponent(schedule.id)}`);
        announce(`The ${schedule.kind} at ${when(schedule.at)} is cancelled`);
        await refresh();
      } catch (error) {
        click.target.after(problemBox(error));
      }
    } }, "Cancel") : "")));
  const timeline = event.timeline;
  return h("section", { "aria-labelledby": "timeline" },
    h("h2", { id: "timeline" }, "Timeline and schedules"),
    h("p", {}, timeline?.automatic
      ? `Automatic: channels ${Math.round((timeline.channelLeadSeconds ?? 0) / 60)} min before the start, the start at the planned time, an end after ${Math.round((timeline.endAfterSeconds ?? 0) / 3600)} h if nobody sent one, the event closed ${Math.round((timeline.deleteChannelsAfterSeconds ?? 0) / 3600)} h after the end.`
      : "Manual: the event does what you send it, now or scheduled."),
    rows.length ? table(["Due", "Kind", "Origin", "State", "Outcome", "Cancel"], rows, "Schedules") : h("p", { class: "muted" }, "Nothing scheduled."));
}

function teams(title) {
  const match = /^(.+?)\s+(?:v|vs\.?)\s+(.+)$/i.exec(title);
  return match ? { homeTeam: match[1], awayTeam: match[2] } : { homeTeam: "Home", awayTeam: "Away" };
}

function parseJSON(text, pointer) {
  try {
    const value = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("must be a JSON object");
    return value;
  } catch (error) {
    const problem = { title: "Not a JSON object", detail: `${pointer}: ${error.message}`, errors: [{ pointer, detail: error.message }] };
    throw Object.assign(new Error(problem.detail), { problem });
  }
}

function startSection(event, path, signal, refresh) {
  const status = h("div");
  const sizeText = h("output", { "data-testid": "audience-size", "aria-live": "polite" }, "…");
  const progressSlot = h("div");
  const environment = select("environment", event.environments.map((env) => [env, env]), event.environments[0]);
  const who = select("audienceKind", [["everyone", "Everyone"], ["tags", "Tokens with any of these tags"], ["userIDs", "These users"]], "everyone");
  const list = input("audienceList", { placeholder: "arsenal, chelsea", disabled: true });
  const attributes = h("textarea", { name: "attributes", rows: 6 }, JSON.stringify({ competition: "Premier League", ...teams(event.title) }, null, 1));
  const contentState = h("textarea", { name: "contentState", rows: 7 }, JSON.stringify({ homeScore: 0, awayScore: 0, period: "1st half", clock: "0'", lastEvent: "Kick-off" }, null, 1));
  const audience = () => {
    const values = list.value.split(",").map((value) => value.trim()).filter(Boolean);
    return who.value === "everyone" || values.length === 0 ? undefined : { [who.value]: values };
  };
  let counting = 0;
  async function recount() {
    const ticket = ++counting;
    list.disabled = who.value === "everyone";
    try {
      const answer = await call("POST", `${path}/audience`, { environment: environment.value, audience: audience() }, { signal });
      if (ticket === counting) sizeText.textContent = `${count(answer.count)} device${answer.count === 1 ? "" : "s"}`;
    } catch (error) {
      if (ticket === counting && error.name !== "AbortError") sizeText.textContent = error.problem?.detail ?? error.message;
    }
  }
  for (const control of [environment, who]) control.addEventListener("change", recount);
  list.addEventListener("input", () => { clearTimeout(list.timer); list.timer = setTimeout(recount, 300); });
  const form = h("form", { onsubmit: async (submitted) => {
    submitted.preventDefault();
    const data = new FormData(form);
    try {
      const body = {
        environment: environment.value,
        attributes: parseJSON(attributes.value, "/attributes"),
        contentState: parseJSON(contentState.value, "/contentState"),
        alert: { title: data.get("alertTitle"), body: data.get("alertBody") },
        audience: audience(),
        at: fromLocalInput(data.get("at")),
      };
      const answer = await call("POST", `${path}/starts`, body);
      clear(status);
      if (answer.progress) {
        announce(`Start job ${answer.id} created`);
        clear(progressSlot, jobProgress(answer, { signal, onDone: (job) => {
          announce(`Start ${job.state}: ${job.progress.accepted} accepted`);
          refresh();
        } }));
      } else {
        clear(progressSlot, notice(`Start scheduled for ${when(answer.at)} (${answer.id}).`));
        await refresh();
      }
    } catch (error) {
      clear(status, problemBox(error, form));
    }
  } },
  h("div", { class: "row" },
    field("Environment", environment, { pointer: "/environment" }),
    field("Audience", who, { pointer: "/audience" }),
    field("Tags or user IDs", list, { pointer: "/audience", hint: "Comma-separated." })),
  h("p", {}, "Audience size now: ", sizeText, h("span", { class: "hint" }, " (devices not yet started for this event)")),
  h("div", { class: "row" },
    field("Attributes (JSON)", attributes, { pointer: "/attributes", wide: false }),
    field("Initial content-state (JSON)", contentState, { pointer: "/contentState" })),
  h("div", { class: "row" },
    field("Alert title", input("alertTitle", { required: true, value: "Kick-off" }), { pointer: "/alert" }),
    field("Alert body", input("alertBody", { required: true, value: event.title }), { pointer: "/alert" }),
    field("Start later (optional)", h("input", { type: "datetime-local", name: "at" }), { pointer: "/at", hint: "Empty: now." })),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Start the Live Activity")));
  recount();
  return h("section", { class: "panel", "aria-labelledby": "start" }, h("h2", { id: "start" }, "Start"), status, form, progressSlot);
}

function composerSection(event, path, logs, refreshLists) {
  const status = h("div");
  const results = h("div");
  const newest = logs.map((entry) => entry.log?.broadcasts?.find((item) => item.contentState)).find(Boolean);
  let lastShape = newest?.contentState;
  const budget = logs.find((entry) => entry.log?.priorityBudget)?.log.priorityBudget;
  const initial = lastShape ?? { homeScore: 0, awayScore: 0, period: "1st half", clock: "0'", lastEvent: "" };
  const kind = select("event", [["update", "Update"], ["end", "End (the final state)"]], "update");
  const contentState = h("textarea", { name: "contentState", rows: 8 }, JSON.stringify(initial, null, 1));
  // Fields from the shape last sent; the JSON itself one click away, for what fields cannot say.
  const history = logs.flatMap((entry) => (entry.log?.broadcasts ?? []).map((item) => item.contentState).filter(Boolean));
  const fields = stateFields(contentState, history);
  fields.show(initial);
  contentState.addEventListener("input", () => {
    try { fields.show(JSON.parse(contentState.value)); } catch { /* not JSON yet: the fields keep the last good state */ }
  });
  const raw = h("div", { id: "composer-raw", hidden: true });
  const rawToggle = h("button", { type: "button", class: "secondary", "aria-expanded": "false", "aria-controls": "composer-raw", onclick: () => {
    raw.hidden = !raw.hidden;
    rawToggle.setAttribute("aria-expanded", String(!raw.hidden));
    rawToggle.textContent = raw.hidden ? "Edit as raw JSON" : "Hide the raw JSON";
    if (!raw.hidden) contentState.focus();
  } }, "Edit as raw JSON");
  const alertTitle = input("alertTitle", { placeholder: "Goal!" });
  const alertBody = input("alertBody", { placeholder: "Saka scores" });
  const priority = select("priority", [["", "The event's policy"], ["10", "10: immediate (uses the budget)"], ["5", "5: normal"], ["1", "1: low"]], "");
  const stale = h("input", { type: "datetime-local", name: "staleDate" });
  const dismissal = h("input", { type: "datetime-local", name: "dismissalDate", disabled: true });
  const relevance = h("input", { type: "number", name: "relevanceScore", step: "any", min: "0" });
  const at = h("input", { type: "datetime-local", name: "at" });
  const shapeNote = h("div", { role: "status" });
  const preview = h("pre", { class: "payload", "data-testid": "payload-preview", tabindex: "0", "aria-label": "Payload preview" });
  const size = h("p", { "data-testid": "payload-size" });

  function request() {
    const body = { event: kind.value, contentState: parseJSON(contentState.value, "/contentState") };
    if (alertTitle.value || alertBody.value) body.alert = { title: alertTitle.value, body: alertBody.value };
    if (priority.value) body.priority = Number(priority.value);
    if (stale.value) body.staleDate = fromLocalInput(stale.value);
    if (kind.value === "end" && dismissal.value) body.dismissalDate = fromLocalInput(dismissal.value);
    if (relevance.value !== "") body.relevanceScore = Number(relevance.value);
    if (at.value) body.at = fromLocalInput(at.value);
    return body;
  }
  function refresh() {
    dismissal.disabled = kind.value !== "end";
    let body;
    try {
      body = request();
      contentState.removeAttribute("aria-invalid");
    } catch (error) {
      contentState.setAttribute("aria-invalid", "true");
      clear(shapeNote, h("p", { class: "warning" }, error.message));
      preview.textContent = "";
      size.textContent = "";
      return;
    }
    const differences = lastShape ? shapeDifferences(lastShape, body.contentState) : [];
    clear(shapeNote, lastShape
      ? differences.length
        ? h("div", { class: "warning" }, h("strong", {}, "Not the shape last sent to this event:"), h("ul", {}, differences.map((text) => h("li", {}, text))))
        : h("p", { class: "hint" }, "Same shape as the content-state last sent to this event.")
      : h("p", { class: "hint" }, "Nothing broadcast to this event yet: no shape to check against."));
    const payload = broadcastPayload(body);
    preview.textContent = payload;
    const bytes = byteSize(payload);
    clear(size, h("span", { class: bytes <= BROADCAST_LIMIT ? "size-ok" : "size-over" }, `${count(bytes)} bytes of APNs' ${count(BROADCAST_LIMIT)}-byte limit for a broadcast`),
      " (the server sets aps.timestamp when it sends)");
  }

  const form = h("form", { onsubmit: async (submitted) => {
    submitted.preventDefault();
    try {
      const body = request();
      const answer = await call("POST", `${path}/broadcasts`, body);
      clear(status);
      if (answer.results) {
        const rows = answer.results.map((result) => h("tr", {},
          h("td", {}, result.environment), h("td", {}, badge(result.status)), h("td", { class: "num" }, result.priority ?? "—"),
          h("td", {}, result.downgraded ? `downgraded: ${result.reason}` : result.reason ?? ""),
          h("td", { class: "num" }, result.latencyMicroseconds !== undefined ? (result.latencyMicroseconds / 1000).toFixed(1) : "—"),
          h("td", {}, h("code", {}, result.apnsRequestID ?? "—"))));
        clear(results, h("h3", {}, "Sent"), table(["Environment", "Status", "Priority#", "Note", "Latency ms#", "apns-request-id"], rows, "Broadcast results"));
        announce(`Broadcast ${answer.results.map((result) => result.status).join(", ")}`);
        // The confirmation stays; the log below is read again, and the next broadcast is checked
        // against the shape just sent.
        lastShape = body.contentState;
        fields.sent(body.contentState);
        refresh();
        await refreshLists();
      } else {
        clear(results, notice(`Scheduled for ${when(answer.at)} (${answer.id}).`));
        await refreshLists();
      }
    } catch (error) {
      clear(status, problemBox(error, form));
    }
  } },
  h("div", { class: "row" },
    field("Kind", kind, { pointer: "/event" }),
    field("Priority", priority, { pointer: "/priority", hint: budget ? `Priority-10 budget left this hour: ${budget.remaining} of ${budget.limitPerHour}; past it, 10 is sent as 5.` : "Priority 10 counts against the channel's hourly budget." })),
  fields.element,
  h("div", { class: "actions" }, rawToggle),
  raw,
  shapeNote,
  h("div", { class: "row" },
    field("Alert title", alertTitle, { pointer: "/alert" }),
    field("Alert body", alertBody, { pointer: "/alert", hint: "Optional: an alert lights the screen." })),
  h("div", { class: "row" },
    field("Stale date", stale, { pointer: "/staleDate" }),
    field("Dismissal date (end)", dismissal, { pointer: "/dismissalDate" }),
    field("Relevance score", relevance, { pointer: "/relevanceScore" }),
    field("Send later (optional)", at, { pointer: "/at", hint: "Empty: now." })),
  h("h3", {}, "Payload preview"), preview, size,
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Broadcast")));
  raw.append(field("Content-state (JSON)", contentState, { pointer: "/contentState", wide: true, hint: "What the Live Activity shows; it must decode into the app's ContentState." }));
  form.addEventListener("input", refresh);
  form.addEventListener("change", refresh);
  refresh();
  return h("section", { class: "panel", "aria-labelledby": "composer" }, h("h2", { id: "composer" }, "Broadcast"), status, form, results);
}

/** A logged alert as the device showed it: its title and body (a localized one by its key). */
function alertText(alert) {
  if (!alert) return "";
  const text = (part) => typeof part === "string" ? part : part?.["loc-key"] ?? JSON.stringify(part ?? "");
  return [h("strong", {}, text(alert.title)), alert.body !== undefined ? ` ${text(alert.body)}` : ""];
}

function logSection(logs) {
  return h("section", { "aria-labelledby": "log" },
    h("h2", { id: "log" }, "Broadcast log"),
    logs.map(({ environment, log, error }) => {
      if (error) return [h("h3", {}, environment), h("p", { class: "muted" }, error.problem?.detail ?? error.message)];
      const rows = log.broadcasts.map((item) => h("tr", {},
        h("td", {}, when(item.sentAt)), h("td", {}, item.event),
        h("td", { class: "num" }, item.downgraded ? `${item.priority} (downgraded)` : item.priority),
        h("td", { class: "num" }, item.status === 0 ? "no answer" : item.status), h("td", {}, item.apnsReason ?? ""),
        h("td", { class: "num", "data-testid": "log-latency" }, (item.latencyMicroseconds / 1000).toFixed(1)),
        h("td", { "data-testid": "log-alert" }, alertText(item.alert)),
        h("td", {}, item.contentState ? h("code", {}, JSON.stringify(item.contentState)) : "")));
      return [h("h3", {}, `${environment}`, log.priorityBudget ? h("span", { class: "hint" }, ` · priority-10 budget left ${log.priorityBudget.remaining} of ${log.priorityBudget.limitPerHour}`) : null),
        rows.length ? table(["Sent", "Kind", "Priority#", "APNs status#", "Reason", "Latency ms#", "Alert", "Content-state"], rows, `Broadcast log, ${environment}`) : h("p", { class: "muted" }, "No broadcast yet.")];
    }));
}
