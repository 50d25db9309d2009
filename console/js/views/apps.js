// Apps and their keys: create an app (deployment key), install its .p8 by file picker, create
// and revoke API keys (deployment key or the app's admin key).
import { call } from "../api.js";
import { h, clear, field, input, select, checkbox, problemBox, notice, when, table, announce, stat } from "../dom.js";
import { can, session } from "../session.js";
import { navigate, switchKey } from "../navigation.js";
import { bodyRule } from "../schema.js";

const ENVIRONMENTS = [["sandbox", "Sandbox"], ["production", "Production"]];

export async function appsView(main, { signal }) {
  const apps = session.me.deploymentKey ? (await call("GET", "/v1/apps", undefined, { signal })).apps : [await call("GET", `/v1/apps/${session.me.app.id}`, undefined, { signal })];
  const rows = apps.map((app) => h("tr", {},
    h("td", {}, h("a", { href: `#/apps/${encodeURIComponent(app.id)}` }, app.name)),
    h("td", {}, h("code", {}, app.bundleID)),
    h("td", {}, app.teamID),
    h("td", {}, app.environments.join(", ")),
    h("td", {}, app.signingKey ? h("code", {}, app.signingKey.keyID) : h("span", { class: "muted" }, "none: install the .p8"))));
  clear(main,
    h("h1", {}, "Apps and keys"),
    apps.length ? table(["App", "Bundle ID", "Team", "Environments", "Signing key"], rows, "Apps") : h("p", {}, "No app yet. Create the first one below."),
    can.createApps ? createAppForm() : null);
}

function createAppForm() {
  const status = h("div");
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: data.get("name"), bundleID: data.get("bundleID"), teamID: data.get("teamID"), environments: data.getAll("environments") };
    try {
      const app = await call("POST", "/v1/apps", body);
      announce(`App ${app.name} created`);
      navigate(`#/apps/${encodeURIComponent(app.id)}`);
    } catch (error) {
      clear(status, problemBox(error, form));
    }
  } },
  h("div", { class: "row" },
    field("Name", input("name", { required: true, placeholder: "Match Centre" }), { pointer: "/name", rule: bodyRule("POST /v1/apps", "/name") }),
    field("Bundle ID", input("bundleID", { required: true, placeholder: "com.example.matchcentre" }), { pointer: "/bundleID", rule: bodyRule("POST /v1/apps", "/bundleID") }),
    field("Team ID", input("teamID", { required: true, placeholder: "ABCDE12345" }), { pointer: "/teamID", rule: bodyRule("POST /v1/apps", "/teamID") })),
  h("fieldset", { "data-pointer": "/environments" }, h("legend", {}, "Environments"),
    checkbox("Sandbox", "environments", true, "sandbox"), checkbox("Production", "environments", false, "production")),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Create app")));
  return h("section", { class: "panel", "aria-labelledby": "create-app" }, h("h2", { id: "create-app" }, "Create an app"), status, form);
}

export async function appView(main, appID, { signal }) {
  const app = await call("GET", `/v1/apps/${encodeURIComponent(appID)}`, undefined, { signal });
  const keysPath = `/v1/apps/${encodeURIComponent(appID)}/api-keys`;
  const keyStatus = h("div");
  const keyList = h("div", { "data-testid": "api-keys" });
  /** Reads the keys again and redraws their list: after each change, without a reload. */
  async function showKeys() {
    const keys = (await call("GET", keysPath, undefined, { signal })).apiKeys;
    const keyRows = keys.map((key) => h("tr", {},
      h("td", {}, h("code", {}, key.prefix)),
      h("td", {}, key.role),
      h("td", {}, key.label || "—"),
      h("td", {}, when(key.createdAt)),
      h("td", {}, key.revokedAt ? `revoked ${when(key.revokedAt)}` : h("button", { type: "button", class: "danger", "aria-label": `Revoke key ${key.prefix}`, onclick: async () => {
        if (!confirm(`Revoke key ${key.prefix}? Calls with it are refused from now on.`)) return;
        try {
          await call("DELETE", `${keysPath}/${encodeURIComponent(key.id)}`);
          announce(`Key ${key.prefix} revoked`);
          clear(keyStatus);
          await showKeys();
        } catch (error) {
          clear(keyStatus, problemBox(error));
        }
      } }, "Revoke"))));
    clear(keyList, keys.length ? table(["Prefix", "Role", "Label", "Created", "Revoke"], keyRows, "API keys") : h("p", {}, "No key yet."));
  }
  await showKeys();
  clear(main,
    h("p", {}, h("a", { href: "#/apps" }, "← Apps")),
    h("h1", {}, app.name),
    h("dl", { class: "stats" },
      stat("Bundle ID", h("code", {}, app.bundleID)), stat("Team", app.teamID), stat("Environments", app.environments.join(", ")),
      stat("Signing key", app.signingKey ? `${app.signingKey.keyID} (${when(app.signingKey.createdAt)})` : "none yet")),
    signingKeyForm(app),
    h("section", { class: "panel", "aria-labelledby": "keys" },
      h("h2", { id: "keys" }, "API keys"),
      keyStatus,
      keyList,
      createKeyForm(app, showKeys)));
}


function signingKeyForm(app) {
  const status = h("div");
  const file = h("input", { type: "file", name: "p8", accept: ".p8,application/pkcs8,text/plain", required: true });
  const keyID = input("keyID", { required: true, placeholder: "ABC123DEFG" });
  file.addEventListener("change", () => {
    const match = /AuthKey_([A-Z0-9]{10})\.p8$/i.exec(file.files[0]?.name || "");
    if (match && !keyID.value) {
      keyID.value = match[1].toUpperCase();
      keyID.dispatchEvent(new Event("input"));
    }
  });
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const chosen = file.files[0];
    if (!chosen) return;
    const privateKey = await chosen.text();
    try {
      await call("PUT", `/v1/apps/${encodeURIComponent(app.id)}/signing-key`, { keyID: keyID.value.trim(), privateKey });
      announce("Signing key installed");
      navigate(location.hash);
    } catch (error) {
      clear(status, problemBox(error, form));
    }
  } },
  h("div", { class: "row" },
    field(".p8 file", file, { pointer: "/privateKey", hint: "The AuthKey_KEYID.p8 Apple's developer portal gave you. It is sealed at rest and never shown again." }),
    field("Key ID", keyID, { pointer: "/keyID", rule: bodyRule("PUT /v1/apps/{appID}/signing-key", "/keyID"), hint: "Apple's 10-character key ID, read from the file's name when it is AuthKey_KEYID.p8." })),
  h("div", { class: "actions" }, h("button", { type: "submit" }, app.signingKey ? "Replace the signing key" : "Install the signing key")));
  return h("section", { class: "panel", "aria-labelledby": "signing" }, h("h2", { id: "signing" }, "APNs signing key (.p8)"), status, form);
}

function createKeyForm(app, showKeys) {
  const status = h("div");
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      const created = await call("POST", `/v1/apps/${encodeURIComponent(app.id)}/api-keys`, { role: data.get("role"), label: data.get("label") || undefined });
      const useIt = h("button", { type: "button", onclick: () => switchKey(created.key).catch((error) => clear(status, problemBox(error))) }, `Sign in with this ${created.apiKey.role} key`);
      const copy = h("button", { type: "button", class: "secondary", onclick: () => navigator.clipboard?.writeText(created.key).then(() => announce("Key copied")) }, "Copy");
      clear(status, h("div", { class: "notice", role: "status" },
        h("p", {}, `New ${created.apiKey.role} key. It is shown once: keep it now.`),
        h("div", { class: "secret" }, h("code", { "data-testid": "new-key" }, created.key), copy, useIt)));
      useIt.focus();
      await showKeys().catch((error) => status.append(problemBox(error)));
    } catch (error) {
      clear(status, problemBox(error, form));
    }
  } },
  h("div", { class: "row" },
    field("Role", select("role", [["publisher", "publisher: events, starts, broadcasts"], ["app", "app: tokens, channel IDs"], ["admin", "admin: the app and its keys"]], "publisher"), { pointer: "/role" }),
    field("Label", input("label", { placeholder: "sports desk" }), { pointer: "/label", rule: bodyRule("POST /v1/apps/{appID}/api-keys", "/label") })),
  h("div", { class: "actions" }, h("button", { type: "submit" }, "Create key")));
  return h("div", {}, h("h3", {}, "Create a key"), status, form);
}
