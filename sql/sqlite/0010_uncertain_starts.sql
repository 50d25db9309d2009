-- 0010_uncertain_starts: a start that was written to APNs and got no answer is recorded as such, not
-- as accepted or failed (issue 20, item 2). The same changes as sql/postgres/0010_uncertain_starts.sql;
-- SQLite cannot change a CHECK constraint, so `deliveries` is built anew (as 0008 did for the start
-- ledger), with the same columns, keys and index.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0010_uncertain_starts.sql   (in one transaction)

-- A delivery's outcome may be 'uncertain': written to APNs, no answer; the device may or may not
-- have it. Nothing references `deliveries`, so dropping the old table checks no foreign key. Row IDs
-- are copied, and so is the table's AUTOINCREMENT counter, so that no ID is ever given twice.
CREATE TABLE deliveries_0010 (
    id           INTEGER     PRIMARY KEY AUTOINCREMENT,
    app_id       text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    job_id       text        NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    token_id     bigint      NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    attempt      integer     NOT NULL,
    outcome      text        NOT NULL
        CHECK (outcome IN ('accepted', 'rejected', 'token_invalid', 'failed', 'skipped', 'uncertain')),
    status       integer,
    apns_id      text,
    reason       text,
    sent_at      integer     NOT NULL,
    completed_at integer     NOT NULL,
    UNIQUE (job_id, token_id, attempt)
);
INSERT INTO deliveries_0010 (id, app_id, job_id, token_id, attempt, outcome, status, apns_id, reason, sent_at, completed_at)
SELECT id, app_id, job_id, token_id, attempt, outcome, status, apns_id, reason, sent_at, completed_at FROM deliveries;
DELETE FROM sqlite_sequence WHERE name = 'deliveries_0010';
INSERT INTO sqlite_sequence (name, seq) SELECT 'deliveries_0010', seq FROM sqlite_sequence WHERE name = 'deliveries';
DROP TABLE deliveries;
ALTER TABLE deliveries_0010 RENAME TO deliveries;
CREATE INDEX deliveries_token ON deliveries (token_id);

-- How many of a job's tokens ended uncertain: counted in progress_attempted, neither in
-- progress_succeeded nor in progress_failed.
ALTER TABLE jobs ADD COLUMN progress_uncertain bigint NOT NULL DEFAULT 0;
