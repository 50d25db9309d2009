// The composer's content-state as fields, one per key of the state last sent: a number as a number
// field, true/false as a checkbox, a string as a text field offering the values sent before (the
// period's "1st half", "Half time": an enumeration the producer already uses). Nested values are
// edited in the raw JSON, one click away; fields and JSON stay one value.
import { h, clear } from "./dom.js";

let listCounter = 0;

/**
 * `textarea` holds the JSON the request is built from; `history` is the content-states sent
 * before, newest first. Answers the fields' element, `show(state)`, which draws them for a state,
 * and `sent(state)` for after a send.
 */
export function stateFields(textarea, history) {
  const box = h("fieldset", { class: "state-fields", "data-testid": "state-fields" }, h("legend", {}, "Content-state"));
  const grid = h("div", { class: "row" });
  box.append(grid);
  const sentBefore = new Map();
  /** Adds a state's strings to the values each field offers. */
  function remember(sent) {
    for (const [key, value] of Object.entries(sent ?? {})) {
      if (typeof value !== "string") continue;
      if (!sentBefore.has(key)) sentBefore.set(key, new Set());
      sentBefore.get(key).add(value);
    }
  }
  history.forEach(remember);
  let state = {};

  function write() {
    textarea.value = JSON.stringify(state, null, 1);
  }

  function control(key, value) {
    const id = `state-${key.replace(/[^A-Za-z0-9_-]/g, "_")}-${++listCounter}`;
    const label = h("label", { for: id }, key);
    if (typeof value === "number") {
      const input = h("input", { type: "number", step: "any", id, name: `state.${key}`, value: String(value), required: true });
      input.addEventListener("input", () => {
        if (input.value === "" || Number.isNaN(Number(input.value))) return;
        state[key] = Number(input.value);
        write();
      });
      return h("div", { class: "field" }, label, input);
    }
    if (typeof value === "boolean") {
      const input = h("input", { type: "checkbox", id, name: `state.${key}`, checked: value });
      input.addEventListener("change", () => { state[key] = input.checked; write(); });
      return h("div", { class: "check" }, input, label);
    }
    if (typeof value === "string") {
      const known = [...(sentBefore.get(key) ?? [])];
      const listID = known.length ? `${id}-sent` : null;
      const input = h("input", { type: "text", id, name: `state.${key}`, value, list: listID, autocomplete: "off" });
      input.addEventListener("input", () => { state[key] = input.value; write(); });
      return h("div", { class: "field" }, label, input,
        listID ? h("datalist", { id: listID }, known.map((option) => h("option", { value: option }))) : null);
    }
    return h("div", { class: "field" }, h("span", { class: "label" }, key),
      h("code", { class: "hint" }, JSON.stringify(value)), h("span", { class: "hint" }, " (edit it in the raw JSON)"));
  }

  /** Draws the fields of `next` (an object); anything else leaves them as they were. */
  function show(next) {
    if (!next || typeof next !== "object" || Array.isArray(next)) return;
    state = structuredClone(next);
    clear(grid, Object.entries(state).map(([key, value]) => control(key, value)));
  }

  /** After a send: its values are offered from now on, and the fields show what was sent. */
  function sent(state) {
    remember(state);
    show(state);
  }

  return { element: box, show, sent };
}
