-- 0012_idempotency_per_api_key: an Idempotency-Key belongs to the API key that used it, and no
-- stored answer keeps a secret.
--
-- Forward-only.
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0012_idempotency_per_api_key.sql
--
-- Issue 21: keys were kept per app, and a replay was answered before the role check, so an app's
-- `app` key could replay its admin's key creation (and read the new key's secret) or a publisher's
-- broadcast. The stored answer of a key creation held the whole key (`mq_…`) in clear for a day.
--
-- What changes:
--   - stored answers that hold an API key (`mq_`, anywhere in the body) are deleted: the server no
--     longer stores the secret (a replay of a key creation now shows the key by its ID only);
--   - every row belongs to one API key (`api_key_id`, part of the primary key). Rows kept from
--     before belong to the all-zero ID, which no key has: no key can replay them (a retry of a
--     request first sent before the upgrade runs again), and they expire within a day.
DELETE FROM idempotency_keys WHERE position('mq_'::bytea IN response_body) > 0;

ALTER TABLE idempotency_keys ADD COLUMN api_key_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
ALTER TABLE idempotency_keys ALTER COLUMN api_key_id DROP DEFAULT;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (app_id, api_key_id, key);
