-- 0004_broadcasts: what channel broadcasts (issue 9, items 4 and 7) add: the broadcast log's event
-- and downgrade, the priority budget's index, and an event's priority policy.
-- The same changes as sql/postgres/0004_broadcasts.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0004_broadcasts.sql   (in one transaction)

-- Which Live Activity event the broadcast carried, and whether the priority budget sent it at 5
-- although the producer's request (or the priority policy) asked for 10.
ALTER TABLE broadcast_log ADD COLUMN event text NOT NULL DEFAULT 'update' CHECK (event IN ('update', 'end'));
ALTER TABLE broadcast_log ADD COLUMN downgraded integer NOT NULL DEFAULT 0 CHECK (downgraded IN (0, 1));

-- The priority budget counts a channel's accepted priority-10 broadcasts of the last hour.
CREATE INDEX broadcast_log_budget ON broadcast_log (channel_id, sent_at) WHERE priority = 10 AND status = 200;

-- An event's priority policy for its broadcasts; NULL follows the server's broadcasts.priorityPolicy.
ALTER TABLE events ADD COLUMN priority_policy text CHECK (priority_policy IN ('standard', 'immediate', 'normal'));
