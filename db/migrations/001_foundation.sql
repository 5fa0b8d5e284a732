-- Foundation: accounts, API keys, customers, coverage, readiness inputs, onboarding links,
-- the event outbox and idempotency records. Every tenant table is keyed by account_id.

CREATE TABLE settings (
  key   text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE accounts (
  id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  slug                    text NOT NULL UNIQUE,
  name                    text NOT NULL,
  country                 text NOT NULL,
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  mode                    text NOT NULL DEFAULT 'test' CHECK (mode IN ('test', 'live')),
  kyb_status              text NOT NULL DEFAULT 'pending' CHECK (kyb_status IN ('pending', 'verified', 'rejected')),
  agreement_version       text,
  agreement_signed_at     timestamptz,
  went_live_at            timestamptz,
  requests_per_minute     integer NOT NULL DEFAULT 120 CHECK (requests_per_minute > 0),
  burst                   integer NOT NULL DEFAULT 30 CHECK (burst > 0),
  concurrent_calls        integer NOT NULL DEFAULT 10 CHECK (concurrent_calls >= 0),
  max_customers           integer CHECK (max_customers >= 0),
  daily_spend_cap_cents   bigint CHECK (daily_spend_cap_cents >= 0),
  monthly_spend_cap_cents bigint CHECK (monthly_spend_cap_cents >= 0),
  -- brand, as the reseller's customers see it
  display_name            text,
  logo_url                text,
  primary_color           text,
  accent_color            text,
  email_from_name         text,
  support_email           text,
  domain                  text,
  created_at              timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id    uuid NOT NULL REFERENCES accounts(id),
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  label         text NOT NULL,
  prefix        text NOT NULL,
  last_four     text NOT NULL,
  scopes        text[] NOT NULL,
  ip_allowlist  text[],
  expires_at    timestamptz,
  revoked_at    timestamptz,
  rotated_at    timestamptz,
  created_at    timestamptz NOT NULL
);
CREATE INDEX api_keys_account ON api_keys (account_id, seq DESC);

-- Each secret a key has had. Only the SHA-256 of a secret is stored. A rotated secret keeps
-- working until grace_until, then answers key_rotated rather than invalid_api_key.
CREATE TABLE api_key_secrets (
  secret_hash  bytea PRIMARY KEY,
  key_id       uuid NOT NULL REFERENCES api_keys(id),
  created_at   timestamptz NOT NULL,
  retired_at   timestamptz,
  grace_until  timestamptz
);
CREATE INDEX api_key_secrets_key ON api_key_secrets (key_id);

-- Opened markets. numbers_available is the inventory the number step draws on.
CREATE TABLE countries (
  country           text PRIMARY KEY,
  name              text NOT NULL,
  calling_language  text NOT NULL,
  default_timezone  text NOT NULL,
  number_route      text NOT NULL,
  numbers_available integer NOT NULL DEFAULT 0 CHECK (numbers_available >= 0),
  opened            boolean NOT NULL DEFAULT true
);
INSERT INTO countries (country, name, calling_language, default_timezone, number_route, numbers_available) VALUES
  ('US', 'United States',  'en-US', 'America/New_York',  'local_rental', 500),
  ('CA', 'Canada',         'en-CA', 'America/Toronto',   'local_rental', 200),
  ('GB', 'United Kingdom', 'en-GB', 'Europe/London',     'local_rental', 200),
  ('IE', 'Ireland',        'en-IE', 'Europe/Dublin',     'local_rental', 50),
  ('AU', 'Australia',      'en-AU', 'Australia/Sydney',  'local_rental', 100),
  ('DE', 'Germany',        'de-DE', 'Europe/Berlin',     'local_rental', 100),
  ('FR', 'France',         'fr-FR', 'Europe/Paris',      'local_rental', 100),
  ('ES', 'Spain',          'es-ES', 'Europe/Madrid',     'local_rental', 100),
  ('NL', 'Netherlands',    'nl-NL', 'Europe/Amsterdam',  'local_rental', 50);

-- The human speech gate: a calling language the service has certified its own delivery in.
CREATE TABLE speech_certifications (
  locale       text PRIMARY KEY,
  certified_at timestamptz NOT NULL
);

CREATE TABLE customers (
  id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id              uuid NOT NULL REFERENCES accounts(id),
  mode                    text NOT NULL CHECK (mode IN ('test', 'live')),
  external_ref            text,
  name                    text NOT NULL,
  brand_name              text,
  website_url             text,
  country                 text NOT NULL REFERENCES countries(country),
  timezone                text NOT NULL,
  status                  text NOT NULL DEFAULT 'prospect' CHECK (status IN ('prospect', 'active', 'paused')),
  script_certified_at     timestamptz,
  terms_accepted_at       timestamptz,
  terms_accepted_by       text,
  calendar_connected_at   timestamptz,
  ready_at                timestamptz,
  daily_spend_cap_cents   bigint CHECK (daily_spend_cap_cents >= 0),
  monthly_spend_cap_cents bigint CHECK (monthly_spend_cap_cents >= 0),
  max_concurrent_calls    integer CHECK (max_concurrent_calls >= 0),
  created_at              timestamptz NOT NULL,
  UNIQUE (account_id, mode, external_ref)
);
CREATE INDEX customers_account ON customers (account_id, mode, seq DESC);

-- Numbers a customer calls from (rented in its country, or its own as caller ID).
CREATE TABLE phone_numbers (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id    uuid NOT NULL REFERENCES accounts(id),
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id   uuid NOT NULL REFERENCES customers(id),
  e164          text NOT NULL,
  country       text NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('rented', 'caller_id')),
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'released')),
  created_at    timestamptz NOT NULL,
  released_at   timestamptz
);
CREATE INDEX phone_numbers_customer ON phone_numbers (customer_id) WHERE status = 'active';

-- What the reseller asked provisioning to do; the state itself is computed on every read.
CREATE TABLE provisioning_requests (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id   uuid NOT NULL REFERENCES accounts(id),
  customer_id  uuid NOT NULL REFERENCES customers(id),
  steps        text[] NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX provisioning_requests_customer ON provisioning_requests (customer_id, seq DESC);

CREATE TABLE onboarding_links (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id    uuid NOT NULL REFERENCES accounts(id),
  customer_id   uuid NOT NULL REFERENCES customers(id),
  mode          text NOT NULL,
  token_hash    bytea NOT NULL UNIQUE,
  prefix        text NOT NULL,
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'replaced')),
  expires_at    timestamptz NOT NULL,
  completed_at  timestamptz,
  accepted_by   text,
  replaced_at   timestamptz,
  created_at    timestamptz NOT NULL
);
CREATE INDEX onboarding_links_customer ON onboarding_links (customer_id, seq DESC);

-- The transactional outbox: written in the same transaction as the fact it describes.
CREATE TABLE events (
  id          text PRIMARY KEY,
  seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id  uuid NOT NULL REFERENCES accounts(id),
  mode        text NOT NULL,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL
);
CREATE INDEX events_account ON events (account_id, mode, seq);

-- Idempotency-Key records, written in the same transaction as the effect they replay.
CREATE TABLE idempotency_keys (
  account_id      uuid NOT NULL REFERENCES accounts(id),
  mode            text NOT NULL,
  key             text NOT NULL,
  request_hash    bytea NOT NULL,
  -- null while the first request is still running (its transaction holds the row)
  response_status integer,
  response_body   jsonb,
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (account_id, mode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
