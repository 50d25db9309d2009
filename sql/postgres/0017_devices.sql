-- 0017_devices: one device through token rotation, the app's device token, and the device's own
-- word on what its Lock Screen shows (issue 34, parts 2 and 5).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0017_devices.sql
--
-- A push-to-start token row is the unit of the start ledger. ActivityKit rotates push-to-start
-- tokens; a registration naming a device ID the app already has a row for (same environment and
-- attributes type) now moves that row to the new token instead of adding a second one, so the
-- ledger, the device's activities and its reports follow the device. The lookup by device ID needs
-- an index; rows without a device ID (most imports) stay out of it.
CREATE INDEX push_to_start_tokens_device
    ON push_to_start_tokens (app_id, environment, attributes_type, device_id) WHERE device_id IS NOT NULL;

-- The app's APNs device token (hex), registered beside its push-to-start token: a background push
-- to it wakes the app to report what it shows. NULL until the app sends one; a registration without
-- it keeps the one the row has.
ALTER TABLE push_to_start_tokens ADD COLUMN device_token text;

-- What the device says ActivityKit shows for an event: one row per (event, device row), replaced by
-- each report. `window_started_at` and `reports_in_window` bound how often one device may report
-- (a fixed window, `presence.reportsPerMinute`). The token reference cascades: a device row deleted
-- (unregistered, or merged into its device's row after its reports moved there) takes its reports.
CREATE TABLE device_presence (
    event_id          uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    token_id          bigint      NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    app_id            uuid        NOT NULL,
    environment       text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    state             text        NOT NULL CHECK (state IN ('showing', 'ended', 'dismissed', 'absent')),
    activity_id       text,
    first_reported_at timestamptz NOT NULL,
    reported_at       timestamptz NOT NULL,
    window_started_at timestamptz NOT NULL,
    reports_in_window integer     NOT NULL,
    PRIMARY KEY (event_id, token_id)
);
CREATE INDEX device_presence_token ON device_presence (token_id);

-- Token rows merged into their device's row (a rotation to a token that had a row of its own), so
-- that a start ledger entry written for the merged row after the merge lands on the device's. A
-- fan-out batch writes ledger entries by token row ID without a lookup (StartLedgerInsert): one that
-- read its audience before the merge may commit after it. The batch takes a shared per-app advisory
-- lock before it writes, the merge an exclusive one, so either the batch commits first and the merge
-- moves its entries, or the merge commits first and the batch's last statement re-homes what it
-- wrote through this table (PostgresStore+DeviceRotation). `into_id` is always a live row: merging
-- a row into which others were merged points theirs at the new one. Rows are tiny and rare; they go
-- with their device's row.
CREATE TABLE merged_token_rows (
    from_id   bigint      PRIMARY KEY,
    into_id   bigint      NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    app_id    uuid        NOT NULL,
    merged_at timestamptz NOT NULL
);
CREATE INDEX merged_token_rows_into ON merged_token_rows (into_id);
