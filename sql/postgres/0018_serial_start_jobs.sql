-- 0018_serial_start_jobs: an event's start jobs run one after another, never side by side.
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0018_serial_start_jobs.sql
--
-- A start job reads its audience less the start ledger, and writes the ledger when a batch's
-- answers commit. Two start jobs of one event running at once (a producer's second start, a
-- late-join start while the kick-off start still runs, a resend of uncertain tokens) could both
-- send to a device neither had committed yet: a second Live Activity. Each start part now carries
-- its event as `serial_key`, and a part is leased only while no part of another start with the same
-- key runs or has begun and not finished, and no older one is due (first come, first served). The
-- parts of one start (`parent_id`) still run side by side on every replica: their audiences are
-- disjoint ranges of token rows. NULL: a job that runs whenever it is due (every other kind).
ALTER TABLE jobs ADD COLUMN serial_key text;

-- Start parts already queued or running when this runs get their event's key (what the engine
-- writes: `start:` and the event ID in lower-case hex with dashes).
UPDATE jobs SET serial_key = 'start:' || lower(arguments ->> 'eventID')
WHERE kind = 'activity.start.partition' AND state IN ('pending', 'running');

-- The lease's check reads the unfinished jobs of one key.
CREATE INDEX jobs_serial_unfinished ON jobs (serial_key) WHERE serial_key IS NOT NULL AND state IN ('pending', 'running');
