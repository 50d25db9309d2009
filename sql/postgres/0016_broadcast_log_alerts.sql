-- 0016_broadcast_log_alerts: the broadcast log keeps the alert a broadcast carried.
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0016_broadcast_log_alerts.sql
--
-- Issue 36: a producer reading the log could not tell the goal from the yellow card without
-- opening each content-state; the alert ("Goal!", "Saka scores") is what the devices lit up with.
-- The `alert` object as APNs got it (title, body, sound; localized keys as sent); NULL for a
-- broadcast without one, and for broadcasts logged before this migration.
ALTER TABLE broadcast_log ADD COLUMN alert json;
