-- 0005_activity_updates: device pushes to activities that are not on a channel, the same changes
-- as sql/postgres/0005_activity_updates.sql.
--
-- Forward-only.
--   sqlite3 ./data/marquee.sqlite < sql/sqlite/0005_activity_updates.sql   (run it in one transaction)

-- SQLite numbers every row already (rowid): an update job reads an event's activities in rowid
-- order (keyset) and checkpoints by it.
CREATE INDEX activities_update_audience ON activities (event_id, environment)
    WHERE state <> 'ended' AND channel_id IS NULL;

-- The timestamp sequence of an event's pushes in an environment where it has no channel.
CREATE TABLE event_timestamps (
    event_id       text    NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment    text    NOT NULL CHECK (environment IN ('sandbox', 'production')),
    last_timestamp integer NOT NULL,
    PRIMARY KEY (event_id, environment)
);
