-- Calls: one row per request, which becomes the call once dialled (the same id answers both,
-- spec: GET /v1/calls/{id}), appointments, and the do-not-call lists.

CREATE TABLE calls (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id         uuid NOT NULL REFERENCES accounts(id),
  mode               text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id        uuid NOT NULL REFERENCES customers(id),
  to_e164            text NOT NULL,
  to_country         text NOT NULL,
  phone_input        text NOT NULL,
  business_name      text,
  external_ref       text,
  status             text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'dialing', 'ringing', 'in_progress', 'completed', 'cancelled', 'expired', 'blocked')),
  outcome            text,
  dial_before        timestamptz NOT NULL,
  next_attempt_at    timestamptz NOT NULL,
  attempts           integer NOT NULL DEFAULT 0,
  waiting_reason     text,
  claimed_at         timestamptz,
  claimed_by         text,
  carrier            text,
  carrier_call_id    text,
  from_e164          text,
  answered_by        text,
  dialed_at          timestamptz,
  answered_at        timestamptz,
  ended_at           timestamptz,
  duration_seconds   integer,
  summary            text,
  appointment_id     uuid,
  transcript         jsonb NOT NULL DEFAULT '[]',
  recording_id       text,
  recording_url      text,
  recording_seconds  integer,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  UNIQUE (account_id, mode, external_ref)
);
CREATE INDEX calls_account ON calls (account_id, mode, seq DESC);
CREATE INDEX calls_customer ON calls (customer_id, seq DESC);
-- The dialler's queue: due requests, claimed with FOR UPDATE SKIP LOCKED.
CREATE INDEX calls_due ON calls (next_attempt_at) WHERE status = 'queued';
-- Live calls a process holds, for the stale-call sweeper.
CREATE INDEX calls_running ON calls (claimed_at) WHERE status IN ('dialing', 'ringing', 'in_progress');
-- Duplicate rule: one open request per number and customer.
CREATE UNIQUE INDEX calls_one_open_per_number ON calls (customer_id, to_e164)
  WHERE status IN ('queued', 'dialing', 'ringing', 'in_progress');
CREATE UNIQUE INDEX calls_carrier_call ON calls (carrier_call_id) WHERE carrier_call_id IS NOT NULL;

CREATE TABLE appointments (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id     uuid NOT NULL REFERENCES accounts(id),
  mode           text NOT NULL,
  customer_id    uuid NOT NULL REFERENCES customers(id),
  call_id        uuid NOT NULL REFERENCES calls(id),
  start_at       timestamptz NOT NULL,
  end_at         timestamptz NOT NULL,
  timezone       text NOT NULL,
  status         text NOT NULL DEFAULT 'booked' CHECK (status IN ('booked', 'cancelled')),
  attendee_name  text,
  notes          text,
  created_at     timestamptz NOT NULL,
  CHECK (end_at > start_at)
);
CREATE INDEX appointments_account ON appointments (account_id, mode, start_at DESC);

-- A reseller's own do-not-call list (both modes: compliance is never relaxed in test mode).
CREATE TABLE dnc_numbers (
  account_id  uuid NOT NULL REFERENCES accounts(id),
  e164        text NOT NULL,
  source      text NOT NULL CHECK (source IN ('api', 'callee_request', 'console')),
  reason      text,
  call_id     uuid,
  created_at  timestamptz NOT NULL,
  seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  PRIMARY KEY (account_id, e164)
);

-- National do-not-call registries, imported by operators; they apply to every account.
CREATE TABLE dnc_registry (
  e164        text PRIMARY KEY,
  country     text NOT NULL,
  source      text NOT NULL,
  imported_at timestamptz NOT NULL
);

-- Why the agent ended the call (end_call tool) or `time_limit`; decides the outcome with the carrier's report.
ALTER TABLE calls ADD COLUMN end_reason text;
