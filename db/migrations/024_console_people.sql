-- The reseller console's people: who may sign in to an account's console, with which role, and
-- their sessions. Passwords are argon2id hashes (PHC strings); tokens of invitations, sessions and
-- password resets are stored as SHA-256 only; a two-factor secret is sealed with the secret box.
ALTER TABLE accounts ADD COLUMN console_require_two_factor boolean NOT NULL DEFAULT false;

CREATE TABLE console_users (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id          uuid NOT NULL REFERENCES accounts(id),
  email               text NOT NULL CHECK (email = lower(email)),
  name                text NOT NULL DEFAULT '',
  role                text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'billing', 'viewer')),
  password_hash       text NOT NULL,
  totp_secret_sealed  bytea,
  totp_enabled_at     timestamptz,
  created_at          timestamptz NOT NULL,
  removed_at          timestamptz
);
-- One person per address across the platform: sign-in is by address alone.
CREATE UNIQUE INDEX console_users_email ON console_users (email) WHERE removed_at IS NULL;
CREATE INDEX console_users_account ON console_users (account_id, created_at);

CREATE TABLE console_invitations (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id        uuid NOT NULL REFERENCES accounts(id),
  email             text NOT NULL CHECK (email = lower(email)),
  role              text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'billing', 'viewer')),
  token_hash        bytea NOT NULL UNIQUE,
  invited_by        uuid REFERENCES console_users(id),
  created_at        timestamptz NOT NULL,
  expires_at        timestamptz NOT NULL,
  accepted_at       timestamptz,
  accepted_user_id  uuid REFERENCES console_users(id),
  revoked_at        timestamptz
);
CREATE INDEX console_invitations_account ON console_invitations (account_id, created_at DESC);

CREATE TABLE console_sessions (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id       uuid NOT NULL REFERENCES console_users(id),
  account_id    uuid NOT NULL REFERENCES accounts(id),
  token_hash    bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz,
  ip            text,
  user_agent    text
);
CREATE INDEX console_sessions_user ON console_sessions (user_id, created_at DESC);

CREATE TABLE console_password_resets (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id     uuid NOT NULL REFERENCES console_users(id),
  token_hash  bytea NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
