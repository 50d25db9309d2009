-- 0013_batch_commit_ids: a fan-out batch commits once, however many times it is sent. The same
-- change as sql/postgres/0013_batch_commit_ids.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0013_batch_commit_ids.sql   (in one transaction)
--
-- Issue 20: a batch whose commit was applied but whose answer was lost is committed again by the
-- fan-out; its progress was added twice. Each batch now carries an ID, fixed across its retries,
-- and the job keeps the last one it applied: a batch that finds its own ID there changes nothing.
-- (An embedded store rarely loses a commit's answer, but the contract is the same on both.)
ALTER TABLE jobs ADD COLUMN last_commit_id text;
