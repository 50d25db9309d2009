// Where the console can go: its sections (which the key's role allows), the hash each lives at
// (#/events, #/events/ars-che), and moving there. The shell (app.js) draws the section the hash
// names whenever it changes; the views move through here and never import the shell.
import { call, storeKey } from "./api.js";
import { session, can } from "./session.js";

/** The console's sections, in the navigation's order. */
export const sections = [
  { path: "apps", label: "Apps and keys", allowed: () => can.manageApps },
  { path: "events", label: "Events", allowed: () => can.readEvents },
  { path: "jobs", label: "Jobs", allowed: () => can.publish },
  { path: "channels", label: "Channels", allowed: () => can.publish },
  { path: "devices", label: "Devices", allowed: () => can.devices },
];

/** The first section the key may see, or sign-in. */
export function homeHash() {
  const first = sections.find((section) => section.allowed());
  return first ? `#/${first.path}` : "#/signin";
}

/** Goes to `hash`; the same hash again draws its view again (the data read anew). */
export function navigate(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}

/** Signs in with another key (one just created): the console shows what that key allows. */
export async function switchKey(key) {
  const me = await call("GET", "/v1/me", undefined, { key });
  storeKey(key);
  session.me = me;
  navigate(homeHash());
}
