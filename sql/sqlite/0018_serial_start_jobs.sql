-- 0018_serial_start_jobs: an event's start jobs run one after another, never side by side. The
-- same change as sql/postgres/0018_serial_start_jobs.sql, which says why.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0018_serial_start_jobs.sql   (in one transaction)
ALTER TABLE jobs ADD COLUMN serial_key text;

UPDATE jobs SET serial_key = 'start:' || lower(json_extract(arguments, '$.eventID'))
WHERE kind = 'activity.start.partition' AND state IN ('pending', 'running');

CREATE INDEX jobs_serial_unfinished ON jobs (serial_key) WHERE serial_key IS NOT NULL AND state IN ('pending', 'running');
