// Small DOM helpers: elements are built with h(), never from HTML strings, so nothing the API
// answers can become markup.
import { constrain } from "./schema.js";

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "text") element.textContent = value;
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

let fieldCounter = 0;

/**
 * A labelled form field. `pointer` (a body field) or `parameter` (a path or query parameter's name)
 * ties it to a problem document's `errors[]`; `rule` (schema.js, from the API's document) holds the
 * control to the server's own limits, and its description is the hint unless one is given.
 */
export function field(label, control, { hint, pointer, parameter, rule, wide } = {}) {
  const id = control.id || `f${++fieldCounter}`;
  control.id = id;
  if (pointer) control.dataset.pointer = pointer;
  if (parameter) control.dataset.parameter = parameter;
  if (rule) constrain(control, rule);
  hint = hint ?? rule?.description;
  const children = [h("label", { for: id }, label)];
  if (hint) {
    const hintID = `${id}-hint`;
    control.setAttribute("aria-describedby", hintID);
    children.push(h("span", { class: "hint", id: hintID }, hint));
  }
  children.push(control);
  return h("div", { class: wide ? "field wide" : "field" }, children);
}

export function input(name, attributes = {}) {
  return h("input", { type: "text", name, ...attributes });
}

export function select(name, options, selected, attributes = {}) {
  return h("select", { name, ...attributes }, options.map(([value, text]) => h("option", { value, selected: value === selected }, text)));
}

export function checkbox(label, name, checked, value) {
  const box = h("input", { type: "checkbox", name, checked, value });
  const id = `f${++fieldCounter}`;
  box.id = id;
  return h("div", { class: "check" }, box, h("label", { for: id }, label));
}

/** The form's control an `errors[]` item of a problem document names, by pointer or parameter. */
function controlFor(item, form) {
  if (!form) return null;
  if (typeof item.pointer === "string") {
    return [...form.querySelectorAll("[data-pointer]")].find((element) =>
      item.pointer === element.dataset.pointer || item.pointer.startsWith(element.dataset.pointer + "/")) ?? null;
  }
  if (typeof item.name === "string") {
    return [...form.querySelectorAll("[data-parameter]")].find((element) => element.dataset.parameter === item.name) ?? null;
  }
  return null;
}

/**
 * Shows an API error as its problem document says: title, detail, and the fields at fault, each
 * with whatever it carries (a body field's `pointer`, a parameter's `in` and `name`, or only a
 * `detail`): an answer of an unexpected shape is still shown, never dropped.
 */
export function problemBox(error, form) {
  const problem = error.problem || { title: "Something went wrong", detail: error.message };
  form?.querySelectorAll("[aria-invalid]").forEach((element) => element.removeAttribute("aria-invalid"));
  const items = Array.isArray(problem.errors) ? problem.errors.filter((item) => item && typeof item === "object") : [];
  const fields = items.map((item) => {
    const control = controlFor(item, form);
    if (control) control.setAttribute("aria-invalid", "true");
    const label = control ? form.querySelector(`label[for="${control.id}"]`)?.textContent : null;
    const where = typeof item.pointer === "string" ? h("code", {}, item.pointer)
      : typeof item.name === "string" ? [item.in ? `${item.in} parameter ` : "parameter ", h("code", {}, item.name)]
      : null;
    return h("li", {}, where, label ? ` (${label})` : "", where || label ? ": " : "", item.detail ?? "");
  });
  return h("div", { class: "problem", role: "alert" },
    h("strong", {}, problem.title || "Error"),
    problem.detail ? h("p", {}, problem.detail) : null,
    problem.apnsReason ? h("p", {}, "APNs' reason: ", h("code", {}, problem.apnsReason)) : null,
    fields.length ? h("ul", {}, fields) : null,
    problem.instance ? h("p", { class: "hint" }, "Request ", h("code", {}, problem.instance)) : null);
}

export function notice(text) {
  return h("div", { class: "notice", role: "status" }, text);
}

export function badge(state) {
  return h("span", { class: `badge state-${state}` }, state);
}

export function when(date) {
  if (!date) return "—";
  const value = new Date(date);
  return value.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function count(number) {
  return number === undefined || number === null ? "—" : Number(number).toLocaleString("en-US");
}

/** `datetime-local` value for a Date in the browser's zone. */
export function localInput(date) {
  const d = new Date(date);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value as RFC 3339 in UTC, or undefined when empty. */
export function fromLocalInput(value) {
  if (!value) return undefined;
  return new Date(value).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function announce(text) {
  const announcer = document.getElementById("announcer");
  announcer.textContent = "";
  setTimeout(() => { announcer.textContent = text; }, 50);
}

export function table(headers, rows, caption) {
  return h("div", { class: "table-wrap" },
    h("table", {},
      caption ? h("caption", { class: "visually-hidden" }, caption) : null,
      h("thead", {}, h("tr", {}, headers.map((header) => h("th", { scope: "col", class: header.endsWith("#") ? "num" : null }, header.replace(/#$/, ""))))),
      h("tbody", {}, rows)));
}

/** One figure of a `<dl class="stats">`: its label and value (numbers formatted). */
export function stat(label, value, attributes = {}) {
  return h("div", { class: "stat", title: attributes.title }, h("dt", {}, label),
    h("dd", { "data-testid": attributes.testid }, typeof value === "number" ? count(value) : value ?? "—"));
}
