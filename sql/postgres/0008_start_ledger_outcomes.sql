-- 0008_start_ledger_outcomes: an accepted start is recorded once, in the start ledger, with what
-- APNs answered; `deliveries` keeps the other outcomes (issue 9: one row per started token instead
-- of two is most of what a fan-out writes) (PostgreSQL 15+).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0008_start_ledger_outcomes.sql

-- The send APNs accepted (1 for the first try), its apns-id and when it was sent; started_at is
-- when APNs answered. NULL in entries written before this migration, whose accepted delivery rows
-- stay in `deliveries`.
ALTER TABLE start_ledger ADD COLUMN attempt integer;
ALTER TABLE start_ledger ADD COLUMN apns_id uuid;
ALTER TABLE start_ledger ADD COLUMN sent_at timestamptz;
