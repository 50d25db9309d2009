// The API's own rules for the fields the console asks for (patterns, lengths, ranges, what they
// mean), read from the OpenAPI document the server serves at /openapi.json, the openapi.yaml it
// was built from: one source of truth, so that no field accepts what the server then refuses, and
// no hint describes a rule of its own. Read once per page load, before the first view.

let openAPI = null;

/** Loads /openapi.json (once); views call the functions below only after it. */
export async function loadSchema() {
  if (openAPI) return;
  let response;
  try {
    response = await fetch("/openapi.json", { headers: { Accept: "application/json" }, credentials: "omit" });
  } catch (error) {
    throw Object.assign(new Error(error.message), { problem: { title: "The server did not answer", detail: `${error.message}. Is marquee serve still running?` } });
  }
  if (!response.ok) {
    throw Object.assign(new Error("no OpenAPI document"), { problem: { title: `The server answered ${response.status} for /openapi.json`, detail: "The console reads the API's field rules from it." } });
  }
  openAPI = await response.json();
}

function resolve(schema) {
  const seen = new Set();
  while (schema?.$ref && !seen.has(schema.$ref)) {
    seen.add(schema.$ref);
    schema = schema.$ref.replace(/^#\//, "").split("/").reduce((node, part) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], openAPI);
  }
  return schema ?? null;
}

function operation(name) {
  const [method, path] = name.split(" ");
  const found = openAPI?.paths?.[path]?.[method.toLowerCase()];
  if (!found) throw new Error(`openapi.json has no ${name}`);
  return { item: openAPI.paths[path], found };
}

/** The rule of a path or query parameter: `parameterRule("PUT /v1/events/{eventKey}", "eventKey")`. */
export function parameterRule(name, parameter) {
  const { item, found } = operation(name);
  const declared = [...(item.parameters ?? []), ...(found.parameters ?? [])].map(resolve).find((candidate) => candidate?.name === parameter);
  if (!declared) throw new Error(`${name} has no parameter ${parameter}`);
  return rule(resolve(declared.schema), declared.description);
}

/** The rule of a JSON body's field: `bodyRule("POST /v1/apps", "/bundleID")`. */
export function bodyRule(name, pointer) {
  const { found } = operation(name);
  let schema = resolve(found.requestBody?.content?.["application/json"]?.schema);
  for (const part of pointer.split("/").filter(Boolean)) {
    schema = resolve(/^\d+$/.test(part) ? schema?.items : schema?.properties?.[part]);
  }
  if (!schema) throw new Error(`${name}'s body has no ${pointer}`);
  return rule(schema);
}

function rule(schema, description) {
  const text = (description || schema.description || "").replace(/`/g, "");
  // A pattern of one class and a bound (`^[A-Za-z0-9._:-]{1,200}$`, `^[A-Z0-9]{10}$`) says its lengths too.
  const bounded = /^\^\[[^\]]*\]\{(\d+)(?:,(\d+))?\}\$$/.exec(schema.pattern ?? "");
  return {
    pattern: schema.pattern ? new RegExp(schema.pattern, "u") : null,
    minLength: schema.minLength ?? (bounded ? Number(bounded[1]) : undefined),
    maxLength: schema.maxLength ?? (bounded ? Number(bounded[2] ?? bounded[1]) : undefined),
    minimum: schema.minimum,
    maximum: schema.maximum,
    description: text,
  };
}

/**
 * Holds `control` to `rule`: the browser's own length and range limits, and the pattern checked
 * as the server checks it (the HTML `pattern` attribute compiles with the `v` flag, which refuses
 * some of the document's patterns), its description the message when it fails.
 */
export function constrain(control, rule) {
  if (!rule) return control;
  if (rule.maxLength !== undefined) control.maxLength = rule.maxLength;
  if (rule.minLength !== undefined && control.required) control.minLength = rule.minLength;
  if (rule.minimum !== undefined) control.min = String(rule.minimum);
  if (rule.maximum !== undefined) control.max = String(rule.maximum);
  if (rule.pattern) {
    const check = () => {
      const wrong = control.value !== "" && !rule.pattern.test(control.value);
      control.setCustomValidity(wrong ? `Not accepted: ${rule.description || `must match ${rule.pattern.source}`}` : "");
      if (wrong) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    };
    control.addEventListener("input", check);
    check();
  }
  return control;
}
