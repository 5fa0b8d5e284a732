-- The emails the service sends, written in the transaction of the fact they tell (the outbox) and
-- sent by the email sender with retries: a crash never loses one, and the dedupe key never
-- writes one twice. Recipients of `billing` emails are resolved when it is sent (the account's
-- people who hold billing:write); `person` and `customer` emails carry their address.
CREATE TABLE email_outbox (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id       uuid NOT NULL REFERENCES accounts(id),
  mode             text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id      uuid REFERENCES customers(id),
  kind             text NOT NULL CHECK (kind IN (
                     'console_invitation', 'password_reset', 'balance_low', 'auto_top_up_failed',
                     'number_payment_due', 'website_hosting_due', 'onboarding_link')),
  audience         text NOT NULL CHECK (audience IN ('person', 'billing', 'customer')),
  to_address       text CHECK (to_address IS NULL OR to_address = lower(to_address)),
  dedupe_key       text NOT NULL,
  data             jsonb NOT NULL,
  -- What must be used again but never stored in clear (a link with a token): sealed by the secret box.
  secret_sealed    bytea,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dead', 'skipped')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  recipients       text[],
  message_id       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  sent_at          timestamptz,
  UNIQUE (account_id, dedupe_key),
  CHECK ((audience = 'billing') = (to_address IS NULL))
);
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX email_outbox_account ON email_outbox (account_id, seq DESC);
