-- 0017_devices: one device through token rotation, the app's device token, and the device's own
-- word on what its Lock Screen shows (issue 34, parts 2 and 5). The same changes as
-- sql/postgres/0017_devices.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0017_devices.sql   (in one transaction)
--
-- A registration naming a device ID the app already has a row for (same environment and attributes
-- type) moves that row to the new token: the lookup by device ID needs an index.
CREATE INDEX push_to_start_tokens_device
    ON push_to_start_tokens (app_id, environment, attributes_type, device_id) WHERE device_id IS NOT NULL;

-- The app's APNs device token (hex), registered beside its push-to-start token; NULL until sent.
ALTER TABLE push_to_start_tokens ADD COLUMN device_token text;

-- What the device says ActivityKit shows for an event: one row per (event, device row), replaced by
-- each report, with the fixed window that bounds how often the device may report. Times are
-- microseconds, as everywhere here.
CREATE TABLE device_presence (
    event_id          text    NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    token_id          bigint  NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    app_id            text    NOT NULL,
    environment       text    NOT NULL CHECK (environment IN ('sandbox', 'production')),
    state             text    NOT NULL CHECK (state IN ('showing', 'ended', 'dismissed', 'absent')),
    activity_id       text,
    first_reported_at integer NOT NULL,
    reported_at       integer NOT NULL,
    window_started_at integer NOT NULL,
    reports_in_window integer NOT NULL,
    PRIMARY KEY (event_id, token_id)
);
CREATE INDEX device_presence_token ON device_presence (token_id);

-- Token rows merged into their device's row (a rotation to a token that had a row of its own). A
-- fan-out batch that read its audience before the merge and commits after it writes its start ledger
-- entries through this table, so that a start the device got under the merged row is the device's
-- (SQLiteStore+Deliveries). `into_id` is always a live row.
CREATE TABLE merged_token_rows (
    from_id   integer PRIMARY KEY,
    into_id   integer NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    app_id    text    NOT NULL,
    merged_at integer NOT NULL
);
CREATE INDEX merged_token_rows_into ON merged_token_rows (into_id);
