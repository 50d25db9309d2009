// The delivery funnel over time as an SVG line chart, drawn here (no library: the CSP allows none):
// time across, devices up, one line each for sent, accepted and confirmed on devices, from
// GET /v1/events/{eventKey}/funnel/series; a legend with the latest values and, for whoever does
// not see the chart, a table of the same numbers.
import { h, count, table } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

/** The lines drawn, in the legend's order; `key` is the API's field. */
export const LINES = [
  { key: "sent", label: "Sent", spoken: "sent", className: "line-sent" },
  { key: "accepted", label: "Accepted by APNs", spoken: "accepted by APNs", className: "line-accepted" },
  { key: "confirmedShowing", label: "Confirmed on devices", spoken: "confirmed on devices", className: "line-showing" },
];
/** Counted in the table too, not drawn: they stay small beside the three lines. */
const MORE = [
  { key: "ended", label: "Ended or dismissed" },
  { key: "lateJoinersStarted", label: "Late joiners started" },
];

const WIDTH = 720;
const HEIGHT = 280;
const MARGIN = { left: 64, right: 20, top: 14, bottom: 44 };

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child !== undefined && child !== null) element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** 0, then about four round steps up to at least `maximum` (1, 2 or 5 times a power of ten, 1 at least). */
function valueTicks(maximum) {
  const top = Math.max(maximum, 1);
  const rough = top / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  // Whole devices: never a step under 1.
  const step = Math.max(1, [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough));
  const ticks = [];
  for (let value = 0; value < top + step; value += step) {
    ticks.push(value);
    if (value >= top) break;
  }
  return ticks;
}

/** A time on the axis: seconds shown when the span is under ten minutes. */
function clock(date, span) {
  return date.toLocaleTimeString(undefined, span < 600_000
    ? { hour: "2-digit", minute: "2-digit", second: "2-digit" }
    : { hour: "2-digit", minute: "2-digit" });
}

/**
 * One environment's chart: `series` is an entry of the answer's `environments`, `from` and
 * `until` its axis. The latest values are in the legend, the `<title>` and a table.
 */
export function funnelChart(series, { from, until }) {
  const points = series.points;
  const latest = points[points.length - 1];
  const name = `Delivery over time, ${series.environment}`;
  const summary = `${name}, devices as of ${new Date(latest.at).toLocaleString()}: ${LINES.map((line) => `${count(latest[line.key])} ${line.spoken}`).join(", ")}`;
  const start = Date.parse(from);
  const span = Math.max(Date.parse(until) - start, 1000);
  const ticks = valueTicks(Math.max(...points.map((point) => point.sent), ...points.map((point) => point.accepted)));
  const top = ticks[ticks.length - 1];
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (time) => MARGIN.left + ((time - start) / span) * plotWidth;
  const y = (value) => MARGIN.top + plotHeight - (value / top) * plotHeight;

  const grid = ticks.map((value) => [
    svg("line", { class: "grid", x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value) }),
    svg("text", { class: "tick", x: MARGIN.left - 8, y: y(value), "text-anchor": "end", "dominant-baseline": "middle" }, count(value)),
  ]);
  const times = [0, 0.25, 0.5, 0.75, 1].map((fraction) => start + fraction * span);
  const timeTicks = times.map((time, index) => svg("text", {
    class: "tick", x: x(time), y: HEIGHT - MARGIN.bottom + 18,
    "text-anchor": index === 0 ? "start" : index === times.length - 1 ? "end" : "middle",
  }, clock(new Date(time), span)));
  // Each line starts at zero at the first send and steps through the buckets' ends. Sent is drawn
  // over accepted, dashed, so that it still shows where every start sent was accepted.
  const drawOrder = ["accepted", "sent", "confirmedShowing"].map((key) => LINES.find((line) => line.key === key));
  const lines = drawOrder.map((line) => svg("polyline", {
    class: `series ${line.className}`,
    "data-series": line.key,
    points: [[x(start), y(0)], ...points.map((point) => [x(Date.parse(point.at)), y(point[line.key])])]
      .map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(" "),
  }));
  const chart = svg("svg", { class: "funnel-chart", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": summary, "data-testid": `funnel-chart-${series.environment}`, "data-points": points.length },
    svg("title", {}, summary),
    grid,
    svg("line", { class: "axis", x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(0), y2: y(0) }),
    svg("line", { class: "axis", x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: y(0) }),
    timeTicks,
    svg("text", { class: "axis-label", x: MARGIN.left + plotWidth / 2, y: HEIGHT - 6, "text-anchor": "middle" }, "Time (your clock)"),
    svg("text", { class: "axis-label", x: 14, y: MARGIN.top + plotHeight / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${MARGIN.top + plotHeight / 2})` }, "Devices"),
    lines);

  const legend = h("ul", { class: "legend", "aria-hidden": "true" }, LINES.map((line) => h("li", {},
    svg("svg", { class: "swatch", viewBox: "0 0 28 10", width: 28, height: 10 }, svg("line", { class: `series ${line.className}`, x1: 0, x2: 28, y1: 5, y2: 5 })),
    ` ${line.label}: `, h("strong", {}, count(latest[line.key])))));
  const rows = [...LINES, ...MORE].map((line) => h("tr", {},
    h("th", { scope: "row" }, line.label),
    h("td", { class: "num", "data-testid": `funnel-${series.environment}-${line.key}` }, count(latest[line.key]))));
  return h("figure", { class: "funnel" },
    chart,
    legend,
    h("figcaption", { class: "hint" }, `From the first send to ${new Date(latest.at).toLocaleString()}, in ${points.length} step${points.length === 1 ? "" : "s"}. Each device counts in its last stage: one that ended no longer counts as showing.`),
    table(["Stage", "Devices now#"], rows, `${name}: the latest values`));
}
