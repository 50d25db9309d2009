// A virtual iPhone's Lock Screen as iOS shows a Live Activity: the wallpaper and the time, the
// alert's banner while it is new, the activity's card (the app's name, the competition and where
// the activity is in its life, the teams and the score, the clock, the last event; dimmed when
// stale or ended), and beside it the Dynamic Island's compact view. Drawn from
// GET /v1/emulator/lock-screens; `marquee demo` still draws the same values as text.
import { h } from "./dom.js";

/** Two to three letters for the Dynamic Island: "Arsenal" → "ARS". */
function short(team) {
  return (team || "").replace(/[^A-Za-z0-9]/g, "").slice(0, 3).toUpperCase() || "—";
}

const STATUS_TEXT = { LIVE: "Live", STALE: "Not updated", ENDED: "Ended", GONE: "Dismissed" };

/**
 * The Lock Screen of `device` (an EmulatorLockScreen). `appName` heads the card; `banner`: the
 * device's alert is new, so its banner shows.
 */
export function lockScreen(device, { appName, banner, now = new Date() }) {
  const time = now.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" }).replace(/\s?[AP]M$/i, "");
  const date = now.toLocaleDateString(undefined, { weekday: "long", month: "long", day: "numeric" });
  const label = device.status
    ? `iOS ${device.iosVersion} device ${device.deviceID}: ${device.status} ${device.homeTeam} ${device.score} ${device.awayTeam}, ${device.clock}, ${device.lastEvent}`
    : `iOS ${device.iosVersion} device ${device.deviceID.slice(0, 8)}: no Live Activity yet`;
  const alert = device.alert && (device.alert.title || device.alert.body) ? device.alert : null;
  const [home, away] = (device.score || "- - -").split(" - ");
  const state = (device.status || "none").toLowerCase();
  return h("figure", { class: `phone state-${state}`, role: "img", "aria-label": label },
    h("div", { class: "phone-screen", "aria-hidden": "true" },
      h("div", { class: "island" }, device.status && device.status !== "GONE"
        ? [h("span", { class: "island-team" }, short(device.homeTeam), " ", h("b", {}, home)),
          h("span", { class: "island-team" }, h("b", {}, away), " ", short(device.awayTeam))]
        : null),
      h("div", { class: "lock-date" }, date),
      h("div", { class: "lock-time" }, time),
      banner && alert ? h("div", { class: "banner", "data-testid": "alert-banner" },
        h("div", { class: "banner-app" }, appName, h("span", {}, "now")),
        alert.title ? h("strong", {}, alert.title) : null,
        alert.body ? h("div", {}, alert.body) : null) : null,
      device.status
        ? h("div", { class: "lockscreen activity" },
          h("div", { class: "activity-head" },
            h("span", { class: "activity-app" }, appName),
            h("span", { class: "activity-status" }, STATUS_TEXT[device.status] ?? device.status)),
          device.competition ? h("div", { class: "activity-competition" }, device.competition) : null,
          h("div", { class: "activity-teams" },
            h("span", { class: "team" }, device.homeTeam),
            h("span", { class: "score" }, device.score),
            h("span", { class: "team away" }, device.awayTeam)),
          h("div", { class: "activity-clock" }, device.clock),
          device.lastEvent ? h("div", { class: "activity-last" }, device.lastEvent) : null)
        : h("div", { class: "lockscreen empty" }, "No Live Activity yet")),
    h("figcaption", {}, `iOS ${device.iosVersion} · ${device.deviceID.slice(0, 8)}${device.online ? "" : " · offline"}`));
}
