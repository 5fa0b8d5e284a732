-- The simulated card processor of test mode (actors/payments/simulated-provider.ts): what Stripe
-- keeps for a checkout, in the database so every process sees the same sessions and payments.
-- Ids are shaped like Stripe's test ids (cs_test_…, pi_test_…, pm_test_…, ch_test_…, re_test_…,
-- evt_test_…). Cards are only ever the public test numbers of payments/test-cards.ts (any other
-- number is refused before anything is stored), kept so a saved card behaves as its number does.
CREATE TABLE simulated_checkout_sessions (
  id                 text PRIMARY KEY,
  seq                bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id         uuid NOT NULL REFERENCES accounts(id),
  mode               text NOT NULL CHECK (mode IN ('test', 'live')),
  -- The idempotency key of the create: one session per card payment.
  card_payment_id    uuid NOT NULL UNIQUE,
  customer_ref       text NOT NULL,
  amount_cents       bigint NOT NULL CHECK (amount_cents > 0),
  description        text NOT NULL,
  save_card          boolean NOT NULL,
  success_url        text NOT NULL,
  cancel_url         text NOT NULL,
  metadata           jsonb NOT NULL,
  status             text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'complete', 'expired')),
  payment_intent_id  text UNIQUE,
  created_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  completed_at       timestamptz
);
CREATE INDEX simulated_checkout_sessions_account ON simulated_checkout_sessions (account_id, seq DESC);

CREATE TABLE simulated_payment_methods (
  id            text PRIMARY KEY,
  -- Attached to this customer (saved for off-session use), or null.
  customer_ref  text,
  test_number   text NOT NULL CHECK (test_number ~ '^[0-9]{12,19}$'),
  brand         text NOT NULL,
  last4         text NOT NULL,
  exp_month     integer NOT NULL,
  exp_year      integer NOT NULL,
  created_at    timestamptz NOT NULL
);

CREATE TABLE simulated_payment_intents (
  id                  text PRIMARY KEY,
  -- The checkout it belongs to, or null for an off-session charge.
  session_id          text UNIQUE REFERENCES simulated_checkout_sessions(id),
  -- The idempotency key of an off-session charge (one payment intent per card payment).
  card_payment_id     uuid NOT NULL UNIQUE,
  customer_ref        text,
  amount_cents        bigint NOT NULL CHECK (amount_cents > 0),
  description         text,
  metadata            jsonb NOT NULL,
  setup_future_usage  text CHECK (setup_future_usage IN ('off_session')),
  status              text NOT NULL CHECK (status IN ('requires_payment_method', 'succeeded')),
  payment_method_id   text REFERENCES simulated_payment_methods(id),
  charge_id           text UNIQUE,
  failure_code        text,
  failure_decline_code text,
  failure_message     text,
  refunded_cents      bigint NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= amount_cents),
  created_at          timestamptz NOT NULL,
  succeeded_at        timestamptz
);

CREATE TABLE simulated_refunds (
  id                 text PRIMARY KEY,
  -- The idempotency key: our refund's id.
  refund_key         text NOT NULL UNIQUE,
  payment_intent_id  text NOT NULL REFERENCES simulated_payment_intents(id),
  amount_cents       bigint NOT NULL CHECK (amount_cents > 0),
  created_at         timestamptz NOT NULL
);

-- The events the processor sends (as Stripe's webhooks), written with the change they tell and
-- handed to the payments room until it has taken them: an event is never lost to a crash.
CREATE TABLE simulated_events (
  id            text PRIMARY KEY,
  seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  type          text NOT NULL,
  payload       jsonb NOT NULL,
  created_at    timestamptz NOT NULL,
  delivered_at  timestamptz
);
CREATE INDEX simulated_events_pending ON simulated_events (seq) WHERE delivered_at IS NULL;
