// The console's only way to the server: Marquee's public REST API (openapi.yaml), with the API
// key held in this tab's sessionStorage (never a cookie). Every route it calls is listed in
// ROUTES, which the browser tests check against the OpenAPI document.

const KEY_STORAGE = "marquee.console.apiKey";

/** Every operation the console calls, as `METHOD /path/{param}` of openapi.yaml. */
export const ROUTES = [
  "GET /v1/me",
  "GET /v1/apps", "POST /v1/apps", "GET /v1/apps/{appID}", "PUT /v1/apps/{appID}/signing-key",
  "GET /v1/apps/{appID}/api-keys", "POST /v1/apps/{appID}/api-keys", "DELETE /v1/apps/{appID}/api-keys/{keyID}",
  "GET /v1/events", "PUT /v1/events/{eventKey}", "GET /v1/events/{eventKey}", "POST /v1/events/{eventKey}/close",
  "POST /v1/events/{eventKey}/audience", "POST /v1/events/{eventKey}/starts", "POST /v1/events/{eventKey}/broadcasts",
  "GET /v1/events/{eventKey}/channels/{environment}/broadcasts", "GET /v1/events/{eventKey}/schedules",
  "GET /v1/events/{eventKey}/funnel/series",
  "DELETE /v1/schedules/{scheduleID}",
  "GET /v1/jobs", "GET /v1/jobs/{jobID}", "POST /v1/jobs/{jobID}/cancel", "GET /v1/jobs/{jobID}/events",
  "GET /v1/channels", "GET /v1/channels/quota", "POST /v1/channels/reconcile",
  "POST /v1/push-to-start-tokens/batch",
  "POST /v1/emulator/devices", "GET /v1/emulator/lock-screens",
];

export function storedKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function storeKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
}

/** A problem document (RFC 9457) the API answered, or one made up for a network failure. */
export class ProblemError extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || "request failed");
    this.problem = problem;
  }
}

/** Raised on 401: the key is unknown or revoked; the console returns to sign-in. */
export class SignedOut extends ProblemError {}

let onSignedOut = () => {};
export function whenSignedOut(handler) { onSignedOut = handler; }

function route(method, path) {
  const template = path.split("?")[0].replace(/\/(apps|api-keys|events|channels|schedules|jobs)\/([^/]+)/g, (all, kind, id) => {
    const names = { apps: "appID", "api-keys": "keyID", events: "eventKey", schedules: "scheduleID", jobs: "jobID" };
    if (kind === "channels" && ["quota", "reconcile"].includes(id)) return all;
    if (kind === "channels") return `/channels/{environment}`;
    return `/${kind}/{${names[kind]}}`;
  });
  return `${method} ${template}`;
}

/** Calls the API; answers the decoded JSON (or null), throws ProblemError with the document. */
export async function call(method, path, body, { key = storedKey(), raw = false, signal } = {}) {
  if (!ROUTES.includes(route(method, path))) throw new Error(`the console does not call ${route(method, path)}`);
  const headers = { Accept: raw ? "text/event-stream" : "application/json, application/problem+json" };
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal, credentials: "omit", cache: "no-store" });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ProblemError({ title: "The server did not answer", detail: `${error.message}. Is marquee serve still running?`, status: 0 });
  }
  if (raw && response.ok) return response;
  const text = await response.text();
  let json = null;
  if (text) {
    try { json = JSON.parse(text); } catch { json = null; }
  }
  if (!response.ok) {
    const problem = json && json.title ? json : { title: `The server answered ${response.status}`, detail: text.slice(0, 300), status: response.status };
    if (response.status === 401) {
      const error = new SignedOut(problem);
      onSignedOut(error);
      throw error;
    }
    throw new ProblemError(problem);
  }
  return json;
}

/**
 * Follows a job's server-sent events (`GET /v1/jobs/{jobID}/events`) with fetch, since EventSource
 * cannot send the Authorization header. Calls onEvent(type, job) for each event; resolves at the
 * stream's end.
 */
export async function followJob(jobID, onEvent, signal) {
  const response = await call("GET", `/v1/jobs/${encodeURIComponent(jobID)}/events`, undefined, { raw: true, signal });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      let type = "message";
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) {
        try { onEvent(type, JSON.parse(data.join("\n"))); } catch { /* not JSON: ignored */ }
      }
    }
  }
}
