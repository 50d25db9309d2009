-- 0015_late_joiners: a device whose push-to-start token is registered (or refreshed) while an event
-- is live gets the event's start then, once, with the latest content-state (issue 34, part 4).
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0015_late_joiners.sql

-- Late joining per event: on unless the producer turned it off (PUT /v1/events/{eventKey}).
ALTER TABLE events ADD COLUMN late_joiners boolean NOT NULL DEFAULT true;

-- What a late joiner of an event gets in one environment, written when a start job is created
-- (the latest start that decided it): whether late joining is on, whom it reaches (the whole
-- environment, or tokens carrying any of `tags`), the start's attributes and content-state (the
-- fallback when the event never broadcast), the alert chosen for late joiners (NULL: none).
CREATE TABLE late_join_offers (
    event_id         uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment      text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    app_id           uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    attributes_type  text        NOT NULL,
    enabled          boolean     NOT NULL,
    everyone         boolean     NOT NULL,
    tags             jsonb       NOT NULL DEFAULT '[]',
    attributes       json        NOT NULL,
    content_state    json        NOT NULL,
    alert            json,
    input_push_token boolean     NOT NULL,
    job_id           uuid        NOT NULL,   -- the start that wrote it
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (event_id, environment)
);
-- The registration hook's probe: the offers a registered token could match.
CREATE INDEX late_join_offers_registration ON late_join_offers (app_id, environment, attributes_type) WHERE enabled;

-- Starts waiting to be sent, one per event and token row, with why: `late_join` (the token came
-- after the event went live). A replica's pump claims a row until `claimed_until` (FOR UPDATE SKIP
-- LOCKED), and removes it in the transaction that enqueues the start job sending it.
CREATE TABLE pending_starts (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id         uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event_id       uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment    text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    token_id       bigint      NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    reason         text        NOT NULL CHECK (reason IN ('late_join')),
    pending_since  timestamptz NOT NULL,
    claim_owner    text,
    claimed_until  timestamptz,
    UNIQUE (event_id, token_id)
);
CREATE INDEX pending_starts_token ON pending_starts (token_id);
