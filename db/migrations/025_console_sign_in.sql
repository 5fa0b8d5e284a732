-- Sign-in for the reseller console: failed attempts counted in the database (so every api process
-- shares the throttle), the last TOTP time step a person used (a code is accepted once), and the
-- password reset links waiting for delivery by email (issue 22 sends them; until then they wait).

-- One row per failed sign-in (wrong password, unknown address, wrong two-factor code), under
-- each key it counts against: 'address:<client address>' and 'person:<email>'.
CREATE TABLE console_sign_in_failures (
  key  text NOT NULL,
  at   timestamptz NOT NULL
);
CREATE INDEX console_sign_in_failures_key ON console_sign_in_failures (key, at DESC);
CREATE INDEX console_sign_in_failures_at ON console_sign_in_failures (at);

-- The time step (unix seconds / 30) of the last TOTP code accepted: a code of that step or an
-- earlier one is refused, so a code seen over a shoulder or in a log cannot be used again.
ALTER TABLE console_users ADD COLUMN totp_last_step bigint;

-- A reset the person asked for themselves keeps its link sealed with the secret box until the
-- email sender (issue 22) delivers it; links minted by the team or the operator are shown to them
-- instead and keep no copy.
ALTER TABLE console_password_resets
  ADD COLUMN requested_by   text NOT NULL DEFAULT 'self' CHECK (requested_by IN ('self', 'team', 'operator')),
  ADD COLUMN link_sealed    bytea,
  ADD COLUMN delivered_at   timestamptz;
CREATE INDEX console_password_resets_undelivered ON console_password_resets (created_at) WHERE link_sealed IS NOT NULL AND delivered_at IS NULL;
CREATE INDEX console_password_resets_user ON console_password_resets (user_id, created_at DESC);
