-- 0010_uncertain_starts: a start that was written to APNs and got no answer (the connection closed
-- or was reset, a timeout, a GOAWAY that covered it) is recorded as such, not as accepted or failed
-- (issue 20, item 2). The device may or may not have it; resending it could start a second Live
-- Activity, so what happens to it is the job's policy (`jobs.uncertainStarts`), and an operator can
-- resend a finished job's uncertain tokens later (POST /v1/jobs/{jobID}/resend-uncertain), through
-- the start ledger (PostgreSQL 15+).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0010_uncertain_starts.sql

-- A delivery's outcome may be 'uncertain'. The new check accepts every value the old one did; adding
-- it reads the table once (which holds outcomes other than accepted starts since 0008).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_outcome_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_outcome_check
    CHECK (outcome IN ('accepted', 'rejected', 'token_invalid', 'failed', 'skipped', 'uncertain'));

-- How many of a job's tokens ended uncertain: counted in progress_attempted, neither in
-- progress_succeeded nor in progress_failed.
ALTER TABLE jobs ADD COLUMN progress_uncertain bigint NOT NULL DEFAULT 0;
