-- 0002_service: what the HTTP service needs on top of 0001 (PostgreSQL 15+).
--
-- Forward-only; 0001 is applied and checksummed, so every change to it lives here.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0002_service.sql

-- Deployment keys: an API key without an app manages apps, and is always admin. The roles are
-- renamed (producer → publisher, device → app); existing keys keep what they could do.
ALTER TABLE api_keys ALTER COLUMN app_id DROP NOT NULL;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
UPDATE api_keys SET role = 'publisher' WHERE role = 'producer';
UPDATE api_keys SET role = 'app' WHERE role = 'device';
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('admin', 'publisher', 'app'));
ALTER TABLE api_keys ADD CONSTRAINT api_keys_deployment_keys_are_admin CHECK (app_id IS NOT NULL OR role = 'admin');
-- api_keys_app (app_id) also serves `WHERE app_id IS NULL`: B-tree indexes keep NULLs.

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
