// The broadcast's body as Marquee sends it to APNs (LiveActivityPayload in MarqueeCore): the same
// keys in the same order, content-state keys sorted as the API keeps them, compact JSON. Only
// `timestamp` is a guess: the server takes it at send time (same digit count, same size).

/** APNs' limit for a broadcast's payload (APNSPayloadLimit.broadcast). */
export const BROADCAST_LIMIT = 5120;

function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sorted(value[key]);
    return out;
  }
  return value;
}

/** A number as Swift's Double.description writes it (50 is "50.0"). */
function double(number) {
  return Number.isInteger(number) ? `${number}.0` : String(number);
}

const unix = (iso) => Math.floor(new Date(iso).getTime() / 1000);

/** The exact body, as a string, of a broadcast request body (BroadcastRequest). */
export function broadcastPayload(request, now = Date.now()) {
  const parts = [`"timestamp":${Math.floor(now / 1000)}`, `"event":${JSON.stringify(request.event)}`, `"content-state":${JSON.stringify(sorted(request.contentState))}`];
  if (request.event === "end" && request.dismissalDate) parts.push(`"dismissal-date":${unix(request.dismissalDate)}`);
  if (request.staleDate) parts.push(`"stale-date":${unix(request.staleDate)}`);
  if (request.relevanceScore !== undefined) parts.push(`"relevance-score":${double(request.relevanceScore)}`);
  if (request.alert) {
    const alert = [`"title":${JSON.stringify(request.alert.title)}`, `"body":${JSON.stringify(request.alert.body)}`];
    if (request.alert.sound) alert.push(`"sound":${JSON.stringify(request.alert.sound)}`);
    parts.push(`"alert":{${alert.join(",")}}`);
  }
  return `{"aps":{${parts.join(",")}}}`;
}

export function byteSize(text) {
  return new TextEncoder().encode(text).length;
}

function kind(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/**
 * How `candidate` differs in shape from `reference` (the content-state last sent to the event):
 * members missing, added, or of another JSON type. An empty list: the same shape.
 */
export function shapeDifferences(reference, candidate, path = "") {
  const differences = [];
  if (kind(reference) === "object" && kind(candidate) === "object") {
    for (const key of Object.keys(reference)) {
      if (!(key in candidate)) differences.push(`${path}/${key} is missing (last sent as ${kind(reference[key])})`);
      else differences.push(...shapeDifferences(reference[key], candidate[key], `${path}/${key}`));
    }
    for (const key of Object.keys(candidate)) if (!(key in reference)) differences.push(`${path}/${key} is new (the app's ContentState may not decode it)`);
    return differences;
  }
  const a = kind(reference), b = kind(candidate);
  const numeric = (k) => k === "integer" || k === "number";
  if (a !== b && !(numeric(a) && numeric(b))) differences.push(`${path || "/"} is ${b}, last sent as ${a}`);
  return differences;
}
