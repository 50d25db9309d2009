// The console's shell: sign-in, the navigation the key's role allows, and a router over the
// location's hash (#/events/ars-che), so that the server only ever serves static files. It
// imports the views; they import the session (session.js) and the navigation (navigation.js),
// never this module, so the modules form no cycle.
import { call, storedKey, storeKey, whenSignedOut, ProblemError } from "./api.js";
import { h, clear, field, input, problemBox } from "./dom.js";
import { loadSchema } from "./schema.js";
import { session } from "./session.js";
import { sections, homeHash, navigate } from "./navigation.js";
import { appsView, appView } from "./views/apps.js";
import { eventsView } from "./views/events.js";
import { eventView } from "./views/event.js";
import { jobsView, jobView } from "./views/jobs.js";
import { channelsView } from "./views/channels.js";
import { devicesView } from "./views/devices.js";

const main = document.getElementById("main");

/** Each section's view. */
const renders = { apps: appsView, events: eventsView, jobs: jobsView, channels: channelsView, devices: devicesView };
const views = sections.map((section) => ({ ...section, render: renders[section.path] }));

/** Views below a list: #/apps/app_…, #/events/KEY, #/jobs/job_…. */
const details = { apps: appView, events: eventView, jobs: jobView };

let currentView = null;

async function route() {
  currentView?.abort?.();
  currentView = new AbortController();
  const signal = currentView.signal;
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent).filter(Boolean);
  if (!session.me && storedKey()) {
    try {
      session.me = await call("GET", "/v1/me");
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      storeKey(null);
      session.me = null;
      session.message = error;
    }
  }
  if (!session.me) {
    renderNav();
    if (parts[0] !== "signin") history.replaceState(null, "", "#/signin");
    return signIn();
  }
  renderNav(parts[0]);
  if (parts.length === 0 || parts[0] === "signin") return navigate(homeHash());
  const view = views.find((candidate) => candidate.path === parts[0] && candidate.allowed());
  if (!view) {
    clear(main, h("h1", {}, "Not available"), h("p", {}, "This key's role does not allow this view. ", h("a", { href: homeHash() }, "Go to the start")));
    return;
  }
  clear(main, h("p", { class: "loading" }, "Loading…"));
  try {
    await loadSchema();
    if (parts.length > 1 && details[parts[0]]) await details[parts[0]](main, parts[1], { signal, section: parts[2] });
    else await view.render(main, { signal });
  } catch (error) {
    if (error.name === "AbortError") return;
    clear(main, h("h1", {}, view.label), problemBox(error));
  }
  const heading = main.querySelector("h1");
  document.title = `${heading ? heading.textContent + " · " : ""}Marquee console`;
  main.focus({ preventScroll: false });
}

function renderNav(active) {
  const nav = document.getElementById("nav");
  const who = document.getElementById("who");
  if (!session.me) {
    nav.hidden = true;
    who.hidden = true;
    return;
  }
  const list = document.getElementById("nav-links");
  clear(list, views.filter((view) => view.allowed()).map((view) =>
    h("li", {}, h("a", { href: `#/${view.path}`, "aria-current": view.path === active ? "page" : null }, view.label))));
  nav.hidden = false;
  const me = session.me;
  const text = me.deploymentKey ? "Deployment key" : `${me.app?.name ?? "App"} · ${me.role}`;
  document.getElementById("who-text").textContent = `${text} (${me.keyPrefix})`;
  who.hidden = false;
}

function signIn() {
  const key = input("apiKey", { type: "password", autocomplete: "off", spellcheck: "false", required: true, placeholder: "mq_…" });
  const status = h("div");
  if (session.message) status.append(problemBox(session.message));
  session.message = null;
  const form = h("form", { class: "panel signin", onsubmit: async (event) => {
    event.preventDefault();
    const value = key.value.trim();
    try {
      const me = await call("GET", "/v1/me", undefined, { key: value });
      storeKey(value);
      session.me = me;
      navigate(homeHash());
    } catch (error) {
      clear(status, problemBox(error, form));
      key.setAttribute("aria-invalid", "true");
      key.focus();
    }
  } },
  field("API key", key, { hint: "The deployment key marquee serve printed at its first start, or one of an app's keys. It stays in this tab only (session storage), never in a cookie." }),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Sign in")));
  clear(main,
    h("h1", {}, "Sign in"),
    h("p", {}, "The Marquee console works with Marquee's public REST API, as the key you sign in with allows."),
    status, form,
    h("section", { class: "panel" },
      h("h2", {}, "First time here?"),
      h("ol", {},
        h("li", {}, "Start the service: ", h("code", {}, "swift run marquee serve"), "."),
        h("li", {}, "Copy the deployment key it printed (", h("code", {}, "mq_…"), ") and sign in with it."),
        h("li", {}, "Create an app with its .p8 signing key and a publisher key, then sign in with the publisher key to create events, add virtual iPhones, start and broadcast."))));
  document.title = "Sign in · Marquee console";
  key.focus();
}

function signOut(message) {
  storeKey(null);
  session.me = null;
  session.message = message || null;
  currentView?.abort?.();
  navigate("#/signin");
}

whenSignedOut((error) => {
  if (!session.me) return;
  signOut(new ProblemError({ ...error.problem, title: "Signed out: " + (error.problem.title || "the key is no longer valid") }));
});
document.getElementById("sign-out").addEventListener("click", () => signOut());
window.addEventListener("hashchange", route);
route();
