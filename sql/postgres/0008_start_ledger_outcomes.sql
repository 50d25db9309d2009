-- 0008_start_ledger_outcomes: an accepted start is recorded once, in the start ledger, with what
-- APNs answered; `deliveries` keeps the other outcomes (issue 9: one row per started token instead
-- of two is most of what a fan-out writes), and without the foreign keys that never act (PostgreSQL 15+).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0008_start_ledger_outcomes.sql

-- The send APNs accepted (1 for the first try), its apns-id and when it was sent; started_at is
-- when APNs answered. NULL in entries written before this migration, whose accepted delivery rows
-- stay in `deliveries`.
ALTER TABLE start_ledger ADD COLUMN attempt integer;
ALTER TABLE start_ledger ADD COLUMN apns_id uuid;
ALTER TABLE start_ledger ADD COLUMN sent_at timestamptz;

-- A ledger entry's app and job are its event's and the batch's leased job's, written by the one
-- statement that checks both; apps and jobs are never deleted, and an event's or a token's deletion
-- still reaches the ledger through event_id and token_id. These two keys cost a lookup each per
-- started token, about a sixth of what a fan-out asked of PostgreSQL, and never acted.
ALTER TABLE start_ledger DROP CONSTRAINT start_ledger_app_id_fkey;
ALTER TABLE start_ledger DROP CONSTRAINT start_ledger_job_id_fkey;
