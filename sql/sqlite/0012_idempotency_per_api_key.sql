-- 0012_idempotency_per_api_key: an Idempotency-Key belongs to the API key that used it, and no
-- stored answer keeps a secret. The same changes as sql/postgres/0012_idempotency_per_api_key.sql.
--
-- Forward-only.   sqlite3 ./data/marquee.sqlite < sql/sqlite/0012_idempotency_per_api_key.sql   (in one transaction)
--
-- Issue 21: keys were kept per app, and a replay was answered before the role check, so an app's
-- `app` key could replay its admin's key creation (and read the new key's secret) or a publisher's
-- broadcast. The stored answer of a key creation held the whole key (`mq_…`) in clear for a day.
--
-- What changes:
--   - stored answers that hold an API key (`mq_`, anywhere in the body) are deleted: the server no
--     longer stores the secret (a replay of a key creation now shows the key by its ID only). The
--     store runs with `secure_delete`, so the deleted rows' bytes are overwritten in the file;
--   - every row belongs to one API key (`api_key_id`, part of the primary key, hence the table is
--     made again: SQLite cannot change a primary key). Rows kept from before belong to the
--     all-zero ID, which no key has: no key can replay them (a retry of a request first sent
--     before the upgrade runs again), and they expire within a day.
DELETE FROM idempotency_keys WHERE instr(CAST(response_body AS TEXT), 'mq_') > 0;

CREATE TABLE idempotency_keys_per_api_key (
    app_id                text        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    api_key_id            text        NOT NULL,
    key                   text        NOT NULL,
    request_hash          text        NOT NULL,
    response_status       integer,                  -- NULL while the first request runs
    response_content_type text,
    response_body         blob,
    created_at            integer     NOT NULL,
    expires_at            integer     NOT NULL,
    PRIMARY KEY (app_id, api_key_id, key)
);
INSERT INTO idempotency_keys_per_api_key
    (app_id, api_key_id, key, request_hash, response_status, response_content_type, response_body, created_at, expires_at)
SELECT app_id, '00000000-0000-0000-0000-000000000000', key, request_hash, response_status, response_content_type,
       response_body, created_at, expires_at
FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_per_api_key RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
