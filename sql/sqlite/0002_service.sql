-- 0002_service: what the HTTP service needs on top of 0001, the same changes as
-- sql/postgres/0002_service.sql.
--
-- Forward-only; 0001 is applied and checksummed, so every change to it lives here.
--   sqlite3 ./data/marquee.sqlite < sql/sqlite/0002_service.sql   (run it in one transaction)

-- Deployment keys: an API key without an app manages apps, and is always admin. The roles are
-- renamed (producer → publisher, device → app); existing keys keep what they could do.
-- SQLite cannot alter a column or a CHECK, so api_keys is rebuilt: create, copy, drop, rename,
-- recreate its index. No table references api_keys, so dropping it cascades nowhere.
CREATE TABLE api_keys_0002 (
    id          text        PRIMARY KEY,
    app_id      text        REFERENCES apps (id) ON DELETE CASCADE,   -- NULL: a deployment key
    role        text        NOT NULL CHECK (role IN ('admin', 'publisher', 'app')),
    prefix      text        NOT NULL UNIQUE,
    secret_hash blob        NOT NULL,
    label       text        NOT NULL,
    created_at  integer     NOT NULL,
    revoked_at  integer    ,
    CHECK (app_id IS NOT NULL OR role = 'admin')
);
INSERT INTO api_keys_0002 (id, app_id, role, prefix, secret_hash, label, created_at, revoked_at)
SELECT id, app_id,
       CASE role WHEN 'producer' THEN 'publisher' WHEN 'device' THEN 'app' ELSE role END,
       prefix, secret_hash, label, created_at, revoked_at
FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_0002 RENAME TO api_keys;
CREATE INDEX api_keys_app ON api_keys (app_id);

-- An event's channels, in any state (the event's channel list, and the cascade when an event is
-- deleted: channels_one_live_per_event_environment covers live rows only).
CREATE INDEX channels_event ON channels (event_id, created_at);

-- Deleting a push-to-start token cascades to its deliveries and start-ledger entries and clears
-- activities' references; without these, each of those would scan its whole table.
CREATE INDEX deliveries_token ON deliveries (token_id);
CREATE INDEX start_ledger_token ON start_ledger (token_id);
CREATE INDEX activities_push_to_start_token
    ON activities (push_to_start_token_id) WHERE push_to_start_token_id IS NOT NULL;

-- Deleting a channel (its event deleted, or an orphan absorbed on activation) clears activities'
-- references to it.
CREATE INDEX activities_channel ON activities (channel_id) WHERE channel_id IS NOT NULL;
