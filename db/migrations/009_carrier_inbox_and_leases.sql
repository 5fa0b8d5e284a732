-- What the carrier tells us lands here first (the inbox, mirror of the events outbox): a status or
-- recording report is stored in the request that brings it, then processed idempotently, and
-- retried until it is, so a failure while processing or a database outage never loses a call's
-- outcome. Scheduling columns are real time (now()), never the test clock.
CREATE TABLE carrier_reports (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  call_id          uuid NOT NULL REFERENCES calls(id),
  kind             text NOT NULL CHECK (kind IN ('status', 'recording')),
  -- The same report sent twice (a carrier's retry) is stored once.
  dedupe_key       text NOT NULL,
  report           jsonb NOT NULL,
  -- Where it came from: the carrier's callback, or our own question to the carrier (reconciled).
  source           text NOT NULL CHECK (source IN ('callback', 'reconciled')),
  received_at      timestamptz NOT NULL DEFAULT now(),
  processed_at     timestamptz,
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  UNIQUE (call_id, dedupe_key)
);
CREATE INDEX carrier_reports_due ON carrier_reports (next_attempt_at) WHERE processed_at IS NULL;

-- A running call belongs to the process that dialled it (claimed_by) for as long as that process
-- renews its lease; a call whose lease ran out is recovered by another process.
ALTER TABLE calls ADD COLUMN lease_expires_at timestamptz;
CREATE INDEX calls_leases ON calls (lease_expires_at) WHERE status IN ('dialing', 'ringing', 'in_progress');
-- call.completed of an answered call waits for its recording (so the event carries what GET
-- returns) until this time at the latest.
ALTER TABLE calls ADD COLUMN completion_event_due_at timestamptz;
CREATE INDEX calls_completion_due ON calls (completion_event_due_at) WHERE completion_event_due_at IS NOT NULL;
