-- 0015_late_joiners: a device whose push-to-start token is registered (or refreshed) while an event
-- is live gets the event's start then, once, with the latest content-state (issue 34, part 4). The
-- same change as sql/postgres/0015_late_joiners.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0015_late_joiners.sql   (in one transaction)

-- Late joining per event: on unless the producer turned it off (PUT /v1/events/{eventKey}).
ALTER TABLE events ADD COLUMN late_joiners integer NOT NULL DEFAULT 1;

-- What a late joiner of an event gets in one environment, written when a start job is created.
CREATE TABLE late_join_offers (
    event_id         text        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment      text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    app_id           text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    attributes_type  text        NOT NULL,
    enabled          integer     NOT NULL,
    everyone         integer     NOT NULL,
    tags             text        NOT NULL DEFAULT '[]',
    attributes       text        NOT NULL,
    content_state    text        NOT NULL,
    alert            text,
    input_push_token integer     NOT NULL,
    job_id           text        NOT NULL,
    updated_at       integer     NOT NULL,
    PRIMARY KEY (event_id, environment)
);
CREATE INDEX late_join_offers_registration ON late_join_offers (app_id, environment, attributes_type) WHERE enabled = 1;

-- Starts waiting to be sent, one per event and token row, with why. SQLite is one process: the
-- claim still fences a pump whose claim lapsed.
CREATE TABLE pending_starts (
    id             INTEGER     PRIMARY KEY AUTOINCREMENT,
    app_id         text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event_id       text        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment    text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    token_id       integer     NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    reason         text        NOT NULL CHECK (reason IN ('late_join')),
    pending_since  integer     NOT NULL,
    claim_owner    text,
    claimed_until  integer,
    UNIQUE (event_id, token_id)
);
CREATE INDEX pending_starts_token ON pending_starts (token_id);
