-- 0005_activity_updates: device pushes to activities that are not on a channel (PostgreSQL 15+).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0005_activity_updates.sql

-- A row number per activity: an update job reads an event's activities in this order (keyset) and
-- checkpoints by it. Existing rows are numbered when the column is added.
ALTER TABLE activities ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX activities_update_audience ON activities (event_id, environment, seq)
    WHERE state <> 'ended' AND channel_id IS NULL;

-- The timestamp sequence of an event's pushes in an environment where it has no channel (starts
-- with `input-push-token`, then updates to their activities): a device drops a push no newer than
-- the last it applied, so every push of the event must be later than the one before.
CREATE TABLE event_timestamps (
    event_id       uuid   NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment    text   NOT NULL CHECK (environment IN ('sandbox', 'production')),
    last_timestamp bigint NOT NULL,
    PRIMARY KEY (event_id, environment)
);
