-- 0009_start_ledger_checked_per_batch: the start ledger's event and token references are checked by
-- the statement that writes a batch of entries, not by a foreign-key trigger per entry.
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0009_start_ledger_checked_per_batch.sql
--
-- Each foreign key ran a trigger per inserted row (a query with its own executor start, a row lock
-- and its end): on a start fan-out the two took 41 % of PostgreSQL's CPU (issue 9, perf at f12e365).
-- What they guaranteed is kept, by the store, in PostgresStore:
--   - a batch's insert finds its event and each token by key and takes the same FOR KEY SHARE lock
--     the trigger took, so neither can be deleted under an uncommitted entry;
--   - deleting an event or a token deletes its ledger entries in the same transaction, in a
--     statement after the row's own delete (which waits for those locks), so it sees every entry
--     committed before.
ALTER TABLE start_ledger DROP CONSTRAINT start_ledger_event_id_fkey;
ALTER TABLE start_ledger DROP CONSTRAINT start_ledger_token_id_fkey;
