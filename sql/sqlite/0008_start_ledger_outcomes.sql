-- 0008_start_ledger_outcomes: an accepted start is recorded once, in the start ledger, with what
-- APNs answered; `deliveries` keeps the other outcomes (issue 9).
-- The same changes as sql/postgres/0008_start_ledger_outcomes.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0008_start_ledger_outcomes.sql   (in one transaction)

-- The send APNs accepted (1 for the first try), its apns-id and when it was sent (microseconds,
-- like every time here); started_at is when APNs answered. NULL in entries written before this
-- migration, whose accepted delivery rows stay in `deliveries`.
ALTER TABLE start_ledger ADD COLUMN attempt integer;
ALTER TABLE start_ledger ADD COLUMN apns_id text;
ALTER TABLE start_ledger ADD COLUMN sent_at integer;
