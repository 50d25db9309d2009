-- 0019_start_confirmation: the `confirm` policy (jobs.uncertainStarts, the default): a start that
-- ended uncertain is resolved by the device's own word (issue 34, part 3). The same changes as
-- sql/postgres/0019_start_confirmation.sql; SQLite cannot change a CHECK constraint, so
-- `pending_starts` is built anew (as 0010 did for `deliveries`), with the same columns, keys and
-- index and one more column.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0019_start_confirmation.sql   (in one transaction)

-- A ledger entry the device confirmed rather than one APNs accepted; NULL for every accepted start.
ALTER TABLE start_ledger ADD COLUMN confirmed_at integer;

-- A pending start may make up for an uncertain start its device reported absent (`absent`), with
-- the start job it makes up for. Nothing references `pending_starts`; row IDs and the AUTOINCREMENT
-- counter are copied so that no ID is given twice.
CREATE TABLE pending_starts_0019 (
    id             INTEGER     PRIMARY KEY AUTOINCREMENT,
    app_id         text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event_id       text        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment    text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    token_id       integer     NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    reason         text        NOT NULL CHECK (reason IN ('late_join', 'absent')),
    pending_since  integer     NOT NULL,
    claim_owner    text,
    claimed_until  integer,
    source_job_id  text,
    UNIQUE (event_id, token_id)
);
INSERT INTO pending_starts_0019 (id, app_id, event_id, environment, token_id, reason, pending_since, claim_owner, claimed_until)
SELECT id, app_id, event_id, environment, token_id, reason, pending_since, claim_owner, claimed_until FROM pending_starts;
DELETE FROM sqlite_sequence WHERE name = 'pending_starts_0019';
INSERT INTO sqlite_sequence (name, seq) SELECT 'pending_starts_0019', seq FROM sqlite_sequence WHERE name = 'pending_starts';
DROP TABLE pending_starts;
ALTER TABLE pending_starts_0019 RENAME TO pending_starts;
CREATE INDEX pending_starts_token ON pending_starts (token_id);

-- What a start job's confirmation knows of each device it watches (times in microseconds).
CREATE TABLE start_confirmations (
    job_id        text    NOT NULL,
    token_id      bigint  NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    event_id      text    NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    app_id        text    NOT NULL,
    watched_since integer NOT NULL,
    asked_at      integer,
    outcome       text    CHECK (outcome IN ('confirmed', 'restarted', 'ended', 'uncertain')),
    decided_at    integer,
    PRIMARY KEY (job_id, token_id)
);
CREATE INDEX start_confirmations_event_token ON start_confirmations (event_id, token_id);
CREATE INDEX start_confirmations_token ON start_confirmations (token_id);
