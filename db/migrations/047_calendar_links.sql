-- Issue 24: the link a reseller mints for its customer to connect a calendar (like the onboarding
-- link): the token only as its hash, 7 days, minting revokes the previous. An OAuth start
-- (Google, Microsoft) keeps the hash of its single-use state nonce here until the callback uses it.
-- The operator's flag `customers.calendar_connected_at` goes: only a working connection
-- (calendar_connections, 046) completes the calendar step.
CREATE TABLE calendar_links (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id       uuid NOT NULL REFERENCES accounts(id),
  customer_id      uuid NOT NULL REFERENCES customers(id),
  mode             text NOT NULL CHECK (mode IN ('test', 'live')),
  token_hash       bytea NOT NULL UNIQUE,
  prefix           text NOT NULL,
  status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'replaced')),
  expires_at       timestamptz NOT NULL,
  emailed_to       text,
  oauth_nonce_hash bytea,
  oauth_kind       text CHECK (oauth_kind IN ('google', 'microsoft')),
  replaced_at      timestamptz,
  created_at       timestamptz NOT NULL
);
CREATE INDEX calendar_links_customer ON calendar_links (customer_id, created_at DESC);

ALTER TABLE customers DROP COLUMN calendar_connected_at;

-- A working connection's checks that found the calendar unreachable, in a row: the third fails it.
ALTER TABLE calendar_connections ADD COLUMN unavailable_checks integer NOT NULL DEFAULT 0;

-- A calendar link emailed to the customer on the reseller's behalf (POST …/calendar_link {email}).
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_kind_check;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_kind_check CHECK (kind IN (
  'console_invitation', 'password_reset', 'balance_low', 'auto_top_up_failed',
  'number_payment_due', 'website_hosting_due', 'onboarding_link', 'calendar_link'));
