-- 0020_presence_state_since: when a device's reported state began, so that the delivery funnel can
-- be drawn over time (issue 36: sent, accepted and confirmed on devices, per bucket of time from the
-- event's first start; GET /v1/events/{eventKey}/funnel/series). A device's row keeps only its last
-- report: `reported_at` moves with every report, even the same one again, and `first_reported_at`
-- is its first report of any state, so neither says since when the device has shown the activity.
-- `state_since` is the time of the report that moved the device into its current state; a report
-- of the same state keeps it, and `ended` and `dismissed` count as one state here, as the funnel
-- counts them.
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0020_presence_state_since.sql

-- Rows written before this migration take their last report's time: the state is known to have
-- held then, and no earlier time is known.
ALTER TABLE device_presence ADD COLUMN state_since timestamptz;
UPDATE device_presence SET state_since = reported_at;
ALTER TABLE device_presence ALTER COLUMN state_since SET NOT NULL;
