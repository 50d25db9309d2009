-- 0016_broadcast_log_alerts: the broadcast log keeps the alert a broadcast carried. The same
-- change as sql/postgres/0016_broadcast_log_alerts.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0016_broadcast_log_alerts.sql   (in one transaction)
--
-- Issue 36: a producer reading the log could not tell the goal from the yellow card without
-- opening each content-state; the alert ("Goal!", "Saka scores") is what the devices lit up with.
-- The `alert` object as APNs got it (JSON text); NULL for a broadcast without one, and for
-- broadcasts logged before this migration.
ALTER TABLE broadcast_log ADD COLUMN alert text;
