// Jobs: the list, one job's page, and the live progress of a job over its server-sent events
// (sent, accepted, failed by reason, uncertain when the API reports it, rate, time left, cancel).
import { call, followJob } from "../api.js";
import { h, clear, problemBox, badge, when, table, count, announce, stat as figure } from "../dom.js";

const stat = (label, value, id, title) => figure(label, value, { testid: `job-${id}`, title });

export async function jobsView(main, { signal }) {
  const jobs = (await call("GET", "/v1/jobs?limit=100", undefined, { signal })).jobs;
  const rows = jobs.map((job) => h("tr", {},
    h("td", {}, h("a", { href: `#/jobs/${encodeURIComponent(job.id)}` }, h("code", {}, job.id))),
    h("td", {}, job.kind),
    h("td", {}, badge(job.state)),
    h("td", {}, job.eventKey ? h("a", { href: `#/events/${encodeURIComponent(job.eventKey)}` }, job.eventKey) : "—"),
    h("td", { class: "num" }, `${count(job.progress.sent)} / ${count(job.progress.total)}`),
    h("td", { class: "num" }, count(job.progress.failed)),
    h("td", {}, when(job.createdAt))));
  clear(main, h("h1", {}, "Jobs"),
    jobs.length ? table(["Job", "Kind", "State", "Event", "Sent#", "Failed#", "Created"], rows, "Jobs") : h("p", {}, "No job yet: a start or an update to iOS 17 activities makes one."));
}

export async function jobView(main, jobID, { signal }) {
  const job = await call("GET", `/v1/jobs/${encodeURIComponent(jobID)}`, undefined, { signal });
  const progress = jobProgress(job, { signal });
  clear(main, h("p", {}, h("a", { href: "#/jobs" }, "← Jobs")), h("h1", {}, `Job ${job.id}`), progress);
}

const FINAL = ["succeeded", "failed", "cancelled"];

/** A job's progress, followed live until it ends. */
export function jobProgress(job, { signal, onDone } = {}) {
  const box = h("section", { class: "panel job", "aria-labelledby": `job-${job.id}` });
  const status = h("div");
  let latest = job;
  const cancel = h("button", { type: "button", class: "danger", onclick: async () => {
    try {
      latest = await call("POST", `/v1/jobs/${encodeURIComponent(job.id)}/cancel`);
      draw();
      announce("Job cancelled");
    } catch (error) {
      clear(status, problemBox(error));
    }
  } }, "Cancel the job");
  const body = h("div");

  function draw() {
    const p = latest.progress;
    const total = p.total ?? 0;
    const failures = (p.failures || []).map((failure) => h("tr", {}, h("td", {}, failure.outcome), h("td", {}, failure.reason ? h("code", {}, failure.reason) : "—"), h("td", { class: "num" }, count(failure.count))));
    const done = FINAL.includes(latest.state);
    cancel.hidden = done;
    clear(body,
      h("p", {}, "State ", h("span", { "data-testid": "job-state" }, badge(latest.state)), latest.eventKey ? [" · event ", h("a", { href: `#/events/${encodeURIComponent(latest.eventKey)}` }, latest.eventKey)] : null, ` · ${latest.kind}`),
      h("label", { for: `bar-${latest.id}` }, `Sent ${count(p.sent)} of ${count(total)}`),
      h("progress", { id: `bar-${latest.id}`, max: Math.max(total, 1), value: Math.min(p.sent, Math.max(total, 1)) }),
      h("dl", { class: "stats" },
        stat("Sent", p.sent, "sent"), stat("Accepted", p.accepted, "accepted"), stat("Failed", p.failed, "failed"),
        p.uncertain !== undefined ? stat("Uncertain", p.uncertain, "uncertain", "Written to APNs with no answer: they may have been delivered") : null,
        stat("Remaining", p.remaining, "remaining"),
        stat("Rate", p.ratePerSecond !== undefined ? `${Math.round(p.ratePerSecond).toLocaleString("en-US")}/s` : "—", "rate"),
        stat("Time left", p.estimatedSecondsLeft !== undefined && !done ? `${Math.ceil(p.estimatedSecondsLeft)} s` : "—", "left"),
        p.tokensRetired ? stat("Tokens retired", p.tokensRetired, "retired") : null),
      failures.length ? [h("h3", {}, "Failed by reason"), table(["Outcome", "APNs reason", "Tokens#"], failures, "Failures by reason")] : null,
      latest.lastError ? h("p", { class: "warning" }, latest.lastError) : null);
  }

  box.append(h("h2", { id: `job-${job.id}` }, "Progress of ", h("code", {}, job.id)), status, body, h("div", { class: "actions" }, cancel));
  draw();
  if (!FINAL.includes(job.state)) {
    const live = h("p", { class: "hint", role: "status" }, "Following live…");
    box.append(live);
    followJob(job.id, (type, updated) => {
      latest = updated;
      draw();
      if (type !== "progress") {
        live.textContent = `Finished: ${updated.state}.`;
        onDone?.(updated);
      }
    }, signal).catch((error) => {
      if (error.name !== "AbortError") clear(status, problemBox(error));
    });
  }
  return box;
}

