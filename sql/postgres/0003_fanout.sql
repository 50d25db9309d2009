-- 0003_fanout: what the start fan-out needs on top of 0002 (PostgreSQL 15+).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0003_fanout.sql

-- A job's audience size when it was created (NULL for jobs without one), and how many tokens its
-- 410s retired (counted by the store, which applies the timestamp rule).
ALTER TABLE jobs ADD COLUMN progress_total bigint;
ALTER TABLE jobs ADD COLUMN progress_retired bigint NOT NULL DEFAULT 0;

-- The job list of an app, newest first, by (created_at, id) keyset.
CREATE INDEX jobs_app_created_id ON jobs (app_id, created_at DESC, id DESC);

-- A fan-out's partitions are jobs of their own (leased, checkpointed and resumed apart, so that
-- replicas share the work), each pointing at the job the API shows.
ALTER TABLE jobs ADD COLUMN parent_id uuid REFERENCES jobs (id) ON DELETE CASCADE;
CREATE INDEX jobs_parent ON jobs (parent_id) WHERE parent_id IS NOT NULL;
