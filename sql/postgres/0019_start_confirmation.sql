-- 0019_start_confirmation: the `confirm` policy (jobs.uncertainStarts, the default): a start that
-- ended uncertain is resolved by the device's own word (issue 34, part 3). A confirmation job per
-- start job asks each uncertain device's app (a background push), then records per device what
-- the answer decided; a device that reports showing is entered in the start ledger as confirmed
-- (nothing sends it the event's start again), one that reports absent once the start had time to
-- arrive is queued for the start once more (`pending_starts.reason = 'absent'`), at most once per
-- device and event.
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0019_start_confirmation.sql

-- A ledger entry the device confirmed (it reported the activity showing after an uncertain start)
-- rather than one APNs accepted; NULL for every accepted start.
ALTER TABLE start_ledger ADD COLUMN confirmed_at timestamptz;

-- A pending start may make up for an uncertain start its device reported absent: `source_job_id`
-- is that start job, whose attributes the start is sent with (NULL for late joiners). The new check
-- accepts every value the old one did.
ALTER TABLE pending_starts DROP CONSTRAINT pending_starts_reason_check;
ALTER TABLE pending_starts ADD CONSTRAINT pending_starts_reason_check CHECK (reason IN ('late_join', 'absent'));
ALTER TABLE pending_starts ADD COLUMN source_job_id uuid;

-- What a start job's confirmation knows of each device it watches: when it began watching it, when
-- it asked the app (NULL: not asked, the app has no device token or not yet), and what was decided
-- (NULL while it waits). `restarted` for an event and device at most once (the confirmation checks
-- the event's rows before queueing a start). Jobs are never deleted; an event's or a token's
-- deletion takes the rows.
CREATE TABLE start_confirmations (
    job_id        uuid        NOT NULL,
    token_id      bigint      NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    event_id      uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    app_id        uuid        NOT NULL,
    watched_since timestamptz NOT NULL,
    asked_at      timestamptz,
    outcome       text        CHECK (outcome IN ('confirmed', 'restarted', 'ended', 'uncertain')),
    decided_at    timestamptz,
    PRIMARY KEY (job_id, token_id)
);
CREATE INDEX start_confirmations_event_token ON start_confirmations (event_id, token_id);
CREATE INDEX start_confirmations_token ON start_confirmations (token_id);
