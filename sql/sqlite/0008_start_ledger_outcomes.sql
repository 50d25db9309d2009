-- 0008_start_ledger_outcomes: an accepted start is recorded once, in the start ledger, with what
-- APNs answered; `deliveries` keeps the other outcomes (issue 9).
-- The same changes as sql/postgres/0008_start_ledger_outcomes.sql; SQLite cannot drop a foreign key,
-- so the table is built anew.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0008_start_ledger_outcomes.sql   (in one transaction)

-- The send APNs accepted (1 for the first try), its apns-id and when it was sent (microseconds,
-- like every time here); started_at is when APNs answered. NULL in entries written before this
-- migration, whose accepted delivery rows stay in `deliveries`.
-- A ledger entry's app and job are its event's and the batch's leased job's, written by the one
-- statement that checks both; apps and jobs are never deleted, and an event's or a token's deletion
-- still reaches the ledger through event_id and token_id: app_id and job_id have no foreign key.
CREATE TABLE start_ledger_0008 (
    event_id   text    NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    token_id   bigint  NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    app_id     text    NOT NULL,
    job_id     text,
    started_at integer NOT NULL,
    attempt    integer,
    apns_id    text,
    sent_at    integer,
    PRIMARY KEY (event_id, token_id)
);
INSERT INTO start_ledger_0008 (event_id, token_id, app_id, job_id, started_at)
SELECT event_id, token_id, app_id, job_id, started_at FROM start_ledger;
DROP TABLE start_ledger;
ALTER TABLE start_ledger_0008 RENAME TO start_ledger;
CREATE INDEX start_ledger_token ON start_ledger (token_id);
