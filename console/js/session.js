// Who is signed in: what `GET /v1/me` said about the key, and what its role lets the console show.
// A module of its own, so that the views read it without importing the shell (app.js) that
// imports them.

/** What `GET /v1/me` said about the key; null when signed out. `message`: why, after a sign-out. */
export const session = { me: null, message: null };

/** What the key may do, from its role: the console shows only that. */
export const can = {
  get manageApps() { return !!session.me && (session.me.deploymentKey || session.me.role === "admin"); },
  get createApps() { return !!session.me?.deploymentKey; },
  get readEvents() { return !!session.me && !session.me.deploymentKey; },
  get publish() { return !!session.me && !session.me.deploymentKey && ["admin", "publisher"].includes(session.me.role); },
  get devices() { return !!session.me?.emulator; },
  get addDevices() { return !!session.me?.emulator && !session.me.deploymentKey; },
};
