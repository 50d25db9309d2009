-- 0001_initial: the Marquee data model on PostgreSQL 15+.
--
-- Forward-only. Apply with `marquee migrate --database-url postgres://...`, or by hand:
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 --single-transaction -f sql/postgres/0001_initial.sql
-- (`marquee migrate` also records the file's SHA-256 in schema_migrations; by hand, insert that row yourself.)
-- Every table carries app_id: every query is scoped by tenant.

-- Tenants: one iOS app of one Apple developer team.
CREATE TABLE apps (
    id              uuid        PRIMARY KEY,
    name            text        NOT NULL,
    bundle_id       text        NOT NULL UNIQUE,
    team_id         text        NOT NULL,
    environments    text        NOT NULL,   -- comma-separated: 'production,sandbox'
    created_at      timestamptz NOT NULL
);

-- APNs token-signing keys (.p8). The private key is sealed with AES-GCM under a master key from
-- configuration; master_key_id names that key so that it can be rotated.
CREATE TABLE signing_keys (
    id                  uuid        PRIMARY KEY,
    app_id              uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    key_id              text        NOT NULL,                 -- Apple's 10-character key ID (kid)
    team_id             text        NOT NULL,                 -- iss
    environments        text        NOT NULL DEFAULT '',      -- empty: both
    master_key_id       text        NOT NULL,
    sealed_private_key  bytea       NOT NULL,
    created_at          timestamptz NOT NULL,
    UNIQUE (app_id, key_id)
);
CREATE INDEX signing_keys_app ON signing_keys (app_id, created_at DESC);

-- API keys: only a SHA-256 of the presented key is stored, found by its public prefix.
CREATE TABLE api_keys (
    id          uuid        PRIMARY KEY,
    app_id      uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    role        text        NOT NULL CHECK (role IN ('admin', 'producer', 'device')),
    prefix      text        NOT NULL UNIQUE,
    secret_hash bytea       NOT NULL,
    label       text        NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX api_keys_app ON api_keys (app_id);

CREATE TABLE events (
    id              uuid        PRIMARY KEY,
    app_id          uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    external_key    text        NOT NULL,                     -- the producer's own key
    title           text        NOT NULL,
    attributes_type text        NOT NULL,
    environments    text        NOT NULL,
    storage_policy  integer     NOT NULL CHECK (storage_policy IN (0, 1)),
    planned_start   timestamptz NOT NULL,
    planned_end     timestamptz NOT NULL,
    state           text        NOT NULL CHECK (state IN ('scheduled', 'live', 'ended', 'cancelled')),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (app_id, external_key)
);

CREATE TABLE channels (
    id                       uuid        PRIMARY KEY,
    app_id                   uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event_id                 uuid        REFERENCES events (id) ON DELETE CASCADE,   -- NULL only for orphans
    environment              text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    apns_channel_id          text,                                                   -- no length assumed
    storage_policy           integer     NOT NULL CHECK (storage_policy IN (0, 1)),
    state                    text        NOT NULL
        CHECK (state IN ('creating', 'active', 'deleting', 'deleted', 'orphaned')),
    create_request_id        uuid        NOT NULL,
    last_broadcast_timestamp bigint,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL,
    CHECK (event_id IS NOT NULL OR state IN ('orphaned', 'deleting', 'deleted')),
    CHECK (state IN ('creating', 'deleted') OR apns_channel_id IS NOT NULL)
);
-- At most one live channel per event and environment, whatever races or retries.
CREATE UNIQUE INDEX channels_one_live_per_event_environment
    ON channels (event_id, environment) WHERE state IN ('creating', 'active', 'deleting');
CREATE UNIQUE INDEX channels_apns_channel_id
    ON channels (app_id, environment, apns_channel_id) WHERE apns_channel_id IS NOT NULL;
CREATE INDEX channels_app_environment_state ON channels (app_id, environment, state);

-- Push-to-start tokens: one row per (app, environment, attributes type, token). `id` increases and
-- is the keyset cursor of audience pages.
CREATE TABLE push_to_start_tokens (
    id                      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id                  uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    environment             text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    attributes_type         text        NOT NULL,
    token                   text        NOT NULL,
    device_id               text,
    user_id                 text,
    tags                    jsonb       NOT NULL DEFAULT '[]',
    ios_version             text,
    frequent_pushes_enabled boolean     NOT NULL DEFAULT false,
    first_registered_at     timestamptz NOT NULL,
    last_registered_at      timestamptz NOT NULL,
    invalidated_at          timestamptz,
    invalidation_reason     text,
    UNIQUE (app_id, environment, attributes_type, token)
) WITH (fillfactor = 85);   -- room on each page for re-registrations to update in place (HOT)
CREATE INDEX push_to_start_tokens_audience
    ON push_to_start_tokens (app_id, environment, attributes_type, id) WHERE invalidated_at IS NULL;
-- No index on tags: audiences are read in id order through the index above, and a tag is a filter
-- on that scan (a GIN index cannot serve the keyset order, and would slow every registration).

CREATE TABLE activities (
    id                     uuid        PRIMARY KEY,
    app_id                 uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event_id               uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    environment            text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    activity_id            text,                                   -- ActivityKit's Activity.id
    channel_id             uuid        REFERENCES channels (id) ON DELETE SET NULL,
    push_to_start_token_id bigint      REFERENCES push_to_start_tokens (id) ON DELETE SET NULL,
    state                  text        NOT NULL CHECK (state IN ('starting', 'active', 'ended')),
    last_timestamp_sent    bigint,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
CREATE UNIQUE INDEX activities_activity_id ON activities (app_id, activity_id) WHERE activity_id IS NOT NULL;
CREATE INDEX activities_event ON activities (event_id);

-- Update tokens with their rotation history; at most one current (unretired) token per activity.
CREATE TABLE activity_update_tokens (
    activity_id uuid        NOT NULL REFERENCES activities (id) ON DELETE CASCADE,
    token       text        NOT NULL,
    received_at timestamptz NOT NULL,
    retired_at  timestamptz,
    PRIMARY KEY (activity_id, token)
);
CREATE UNIQUE INDEX activity_update_tokens_current ON activity_update_tokens (activity_id) WHERE retired_at IS NULL;

-- The job queue every replica leases from (FOR UPDATE SKIP LOCKED).
CREATE TABLE jobs (
    id                 uuid        PRIMARY KEY,
    app_id             uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    kind               text        NOT NULL,
    arguments          json        NOT NULL,   -- json, not jsonb: key order is kept exactly
    due_at             timestamptz NOT NULL,
    state              text        NOT NULL
        CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
    lease_owner        text,
    lease_expires_at   timestamptz,
    attempts           integer     NOT NULL DEFAULT 0,
    progress_attempted bigint      NOT NULL DEFAULT 0,
    progress_succeeded bigint      NOT NULL DEFAULT 0,
    progress_failed    bigint      NOT NULL DEFAULT 0,
    checkpoint         text,
    last_error         text,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    CHECK (state <> 'running' OR (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
);
CREATE INDEX jobs_pending_due ON jobs (due_at) WHERE state = 'pending';
CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_app ON jobs (app_id, created_at);

CREATE TABLE deliveries (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id       uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    job_id       uuid        NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    token_id     bigint      NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    attempt      integer     NOT NULL,
    outcome      text        NOT NULL
        CHECK (outcome IN ('accepted', 'rejected', 'token_invalid', 'failed', 'skipped')),
    status       integer,
    apns_id      uuid,
    reason       text,
    sent_at      timestamptz NOT NULL,
    completed_at timestamptz NOT NULL,
    UNIQUE (job_id, token_id, attempt)
);

-- One start per event and token, whatever retries and resumed shards send again.
CREATE TABLE start_ledger (
    event_id   uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    token_id   bigint      NOT NULL REFERENCES push_to_start_tokens (id) ON DELETE CASCADE,
    app_id     uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    job_id     uuid        REFERENCES jobs (id) ON DELETE SET NULL,
    started_at timestamptz NOT NULL,
    PRIMARY KEY (event_id, token_id)
);

CREATE TABLE idempotency_keys (
    app_id                uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    key                   text        NOT NULL,
    request_hash          text        NOT NULL,
    response_status       integer,                  -- NULL while the first request runs
    response_content_type text,
    response_body         bytea,
    created_at            timestamptz NOT NULL,
    expires_at            timestamptz NOT NULL,
    PRIMARY KEY (app_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

CREATE TABLE broadcast_log (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id          uuid        NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    channel_id      uuid        NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    apns_request_id uuid        NOT NULL,
    apns_unique_id  text,
    priority        integer     NOT NULL CHECK (priority IN (1, 5, 10)),
    aps_timestamp   bigint      NOT NULL,
    status          integer     NOT NULL,
    reason          text,
    latency_us      bigint      NOT NULL,
    sent_at         timestamptz NOT NULL
);
CREATE INDEX broadcast_log_channel ON broadcast_log (channel_id, id DESC);
