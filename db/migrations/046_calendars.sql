-- Issue 24: the business's real calendar. One connection per customer (CalDAV, Google, Microsoft,
-- or the simulated calendar of test mode), its credentials sealed with the secret box (never in
-- clear, never returned); its health (working / failing with the reason); the sync token that
-- reads only what changed. The customer's booking rules (business hours, meeting length, buffer,
-- notice, horizon) are a jsonb of its own; null means the documented defaults
-- (actors/customer/booking-settings.ts). An appointment keeps the identity of its calendar event.
CREATE TABLE calendar_connections (
  customer_id     uuid PRIMARY KEY REFERENCES customers(id),
  account_id      uuid NOT NULL REFERENCES accounts(id),
  mode            text NOT NULL CHECK (mode IN ('test', 'live')),
  kind            text NOT NULL CHECK (kind IN ('caldav', 'google', 'microsoft', 'simulated')),
  -- SecretBox.seal(JSON of CalendarCredentials): refreshed OAuth tokens are sealed again.
  credentials     bytea NOT NULL,
  -- What the customer recognises it by: the CalDAV calendar's address (no password) or the account's e-mail.
  label           text NOT NULL,
  status          text NOT NULL CHECK (status IN ('working', 'failing')),
  failure_code    text,
  failure_message text,
  connected_at    timestamptz NOT NULL,
  checked_at      timestamptz NOT NULL,
  -- The next periodic check (working) or retry (failing).
  check_due_at    timestamptz NOT NULL,
  sync_token      text,
  synced_at       timestamptz,
  updated_at      timestamptz NOT NULL
);
CREATE INDEX calendar_connections_check_due ON calendar_connections (check_due_at);

ALTER TABLE customers ADD COLUMN booking_settings jsonb;

ALTER TABLE appointments
  ADD COLUMN calendar_kind     text,
  ADD COLUMN calendar_event_id text,
  ADD COLUMN calendar_etag     text,
  ADD COLUMN updated_at        timestamptz,
  ADD COLUMN cancelled_at      timestamptz;
-- One live appointment per calendar event; the sync finds an appointment by its event.
CREATE UNIQUE INDEX appointments_calendar_event ON appointments (customer_id, calendar_event_id) WHERE calendar_event_id IS NOT NULL;
-- Booked meetings of a customer by time: the free-slot search and the overlap check under the lock.
CREATE INDEX appointments_customer_time ON appointments (customer_id, start_at) WHERE status = 'booked';

-- The simulated calendar (test mode, and tests): the same interface as a real calendar, kept in
-- PostgreSQL so every process sees it. `version` grows with every change to any event of the
-- calendar; a sync token is the version last read.
CREATE TABLE simulated_calendar_events (
  calendar_id  text NOT NULL,
  id           text NOT NULL,
  uid          text NOT NULL,
  summary      text NOT NULL,
  description  text NOT NULL DEFAULT '',
  start_at     timestamptz NOT NULL,
  end_at       timestamptz NOT NULL,
  -- Busy blocks the business keeps itself (transparent = false) and meetings booked by calls.
  deleted      boolean NOT NULL DEFAULT false,
  etag         text NOT NULL,
  version      bigint NOT NULL,
  PRIMARY KEY (calendar_id, id),
  CHECK (end_at > start_at)
);
CREATE INDEX simulated_calendar_events_version ON simulated_calendar_events (calendar_id, version);
CREATE SEQUENCE simulated_calendar_version;
