-- Webhooks: endpoints (console-managed), one delivery per event and endpoint, every attempt.

CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id                  uuid NOT NULL REFERENCES accounts(id),
  mode                        text NOT NULL CHECK (mode IN ('test', 'live')),
  url                         text NOT NULL,
  description                 text,
  -- empty: every type, including types added later
  event_types                 text[] NOT NULL DEFAULT '{}',
  enabled                     boolean NOT NULL DEFAULT true,
  -- signing secrets are needed in clear to sign, so they are stored encrypted (AES-256-GCM)
  secret_ciphertext           bytea NOT NULL,
  previous_secret_ciphertext  bytea,
  previous_secret_expires_at  timestamptz,
  deleted_at                  timestamptz,
  created_at                  timestamptz NOT NULL,
  updated_at                  timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, mode) WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  event_id         text NOT NULL REFERENCES events(id),
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints(id),
  account_id       uuid NOT NULL REFERENCES accounts(id),
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'dead')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  -- a sender that dies mid-attempt leaves this in the past: the delivery is claimed again
  locked_until     timestamptz,
  last_status_code integer,
  last_error       text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_deliveries_sending ON webhook_deliveries (locked_until) WHERE status = 'sending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq DESC);

CREATE TABLE webhook_attempts (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  delivery_id   uuid NOT NULL REFERENCES webhook_deliveries(id),
  attempt       integer NOT NULL,
  attempted_at  timestamptz NOT NULL,
  status_code   integer,
  duration_ms   integer NOT NULL,
  error         text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, seq);
