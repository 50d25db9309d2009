-- 0007_activity_priority_budget: the hourly budget of priority-10 device pushes per activity, and
-- the frequent-pushes flag apps report for their activities (issue 9, item 7) (PostgreSQL 15+).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0007_activity_priority_budget.sql

-- Whether the app reported `ActivityAuthorizationInfo.frequentPushesEnabled` for the activity (or
-- for the push-to-start token whose start began it): such an activity gets the larger budget.
ALTER TABLE activities ADD COLUMN frequent_pushes_enabled boolean NOT NULL DEFAULT false;
-- The activity's current hour of priority-10 device pushes: when it began (the first accepted one
-- after the last hour ended) and how many APNs accepted in it. NULL until the first.
ALTER TABLE activities ADD COLUMN priority10_window_start timestamptz;
ALTER TABLE activities ADD COLUMN priority10_sent integer NOT NULL DEFAULT 0;

-- Pushes a job sent at 5 because the activity had used its budget of priority-10 pushes.
ALTER TABLE jobs ADD COLUMN progress_downgraded bigint NOT NULL DEFAULT 0;
