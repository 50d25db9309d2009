-- 0006_schedules: scheduled starts, broadcasts and ends, and events' timelines (issue 9, item 6).
-- The same changes as sql/postgres/0006_schedules.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0006_schedules.sql   (in one transaction)

-- An action due at a time: a start, broadcast or end a producer scheduled, or a step of an event's
-- timeline. A job with the same id (kind 'schedule') wakes a worker at due_at; the schedule says
-- what to do and what came of it. Its state only moves forward (ScheduleState in the code).
CREATE TABLE schedules (
    id           text        PRIMARY KEY,
    app_id       text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event_id     text        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    kind         text        NOT NULL CHECK (kind IN ('start', 'broadcast', 'end', 'channels', 'close')),
    origin       text        NOT NULL CHECK (origin IN ('api', 'timeline')),
    due_at       integer     NOT NULL,
    state        text        NOT NULL
        CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled', 'skipped')),
    request      text        NOT NULL,   -- JSON text, key order kept exactly
    outcome      text,
    last_error   text,
    attempts     integer     NOT NULL DEFAULT 0,
    performed_at integer,
    created_at   integer     NOT NULL,
    updated_at   integer     NOT NULL
);
-- An event's schedules by due time (the list, and the cascade when the event is deleted).
CREATE INDEX schedules_event_due ON schedules (event_id, due_at, id);
-- One step of each kind per event's timeline, whatever replicas plan at once; a cancelled step
-- (the timeline turned off) makes room for a new one.
CREATE UNIQUE INDEX schedules_one_timeline_step
    ON schedules (event_id, kind) WHERE origin = 'timeline' AND state <> 'cancelled';

-- The event's timeline settings as the producer gave them (NULL: none).
ALTER TABLE events ADD COLUMN timeline text;

-- A broadcast's content-state (what an automatic end repeats), and the schedule that sent it. A
-- scheduled broadcast is logged before it is sent, at most once per schedule and channel: a worker
-- taking the schedule over finds the row and sends nothing again.
ALTER TABLE broadcast_log ADD COLUMN content_state text;
ALTER TABLE broadcast_log ADD COLUMN schedule_id text;
CREATE UNIQUE INDEX broadcast_log_schedule_channel
    ON broadcast_log (schedule_id, channel_id) WHERE schedule_id IS NOT NULL;
-- An event's first accepted end (its timeline's facts), over its channels.
CREATE INDEX broadcast_log_channel_end ON broadcast_log (channel_id, sent_at) WHERE event = 'end' AND status = 200;
