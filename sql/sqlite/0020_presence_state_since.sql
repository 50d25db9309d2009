-- 0020_presence_state_since: when a device's reported state began, so that the delivery funnel can
-- be drawn over time (issue 36; GET /v1/events/{eventKey}/funnel/series). The same change as
-- sql/postgres/0020_presence_state_since.sql: `reported_at` moves with every report and
-- `first_reported_at` is the first report of any state, so neither says since when the device has
-- shown the activity; `state_since` is the time of the report that moved the device into its current
-- state (`ended` and `dismissed` count as one state, as the funnel counts them).
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0020_presence_state_since.sql   (in one transaction)

-- SQLite adds a NOT NULL column only with a default; every row is then given its last report's
-- time (the state is known to have held then, and no earlier time is known), and every report
-- writes the column, so the default is never read.
ALTER TABLE device_presence ADD COLUMN state_since integer NOT NULL DEFAULT 0;
UPDATE device_presence SET state_since = reported_at;
