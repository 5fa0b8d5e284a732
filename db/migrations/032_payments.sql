-- Card payments (issue 22): top-ups paid by card through a processor (Stripe in live mode, the
-- simulated processor in test mode), the processor's events inbox, saved cards, the processor's
-- customers, refunds of top-ups and the automatic top-up's state.

-- A refund of a card top-up is its own ledger line (negative, cash only).
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_type_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_type_check
  CHECK (type IN ('usage', 'top_up', 'bonus', 'refund', 'minimum', 'bonus_expired', 'top_up_refund'));
-- One top-up per payment: the same payment intent credited twice writes nothing the second time.
CREATE UNIQUE INDEX ledger_top_up_payment ON ledger_entries (account_id, payment_reference)
  WHERE type = 'top_up' AND payment_reference IS NOT NULL;
-- The bonus grant of a card top-up names its payment, so a refund forfeits what that payment earned.
ALTER TABLE bonus_grants ADD COLUMN payment_reference text;
CREATE INDEX bonus_grants_payment ON bonus_grants (account_id, payment_reference) WHERE payment_reference IS NOT NULL;

-- The processor's customer of an account, created once per mode and processor.
CREATE TABLE payment_customers (
  account_id    uuid NOT NULL REFERENCES accounts(id),
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  processor     text NOT NULL CHECK (processor IN ('stripe', 'simulated')),
  customer_ref  text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, mode, processor)
);

-- The card saved for off-session charges (automatic top-up): one per account and mode.
CREATE TABLE saved_cards (
  account_id         uuid NOT NULL REFERENCES accounts(id),
  mode               text NOT NULL CHECK (mode IN ('test', 'live')),
  processor          text NOT NULL CHECK (processor IN ('stripe', 'simulated')),
  customer_ref       text NOT NULL,
  payment_method_id  text NOT NULL,
  brand              text,
  last4              text,
  exp_month          integer,
  exp_year           integer,
  saved_at           timestamptz NOT NULL,
  PRIMARY KEY (account_id, mode)
);

-- One card payment: a checkout the reseller pays on the processor's page, or an automatic
-- top-up charged off-session. Credited once: `ledger_line_id` is set in the transaction that
-- writes the top-up line (the row locked).
CREATE TABLE card_payments (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                  bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id           uuid NOT NULL REFERENCES accounts(id),
  mode                 text NOT NULL CHECK (mode IN ('test', 'live')),
  processor            text NOT NULL CHECK (processor IN ('stripe', 'simulated')),
  kind                 text NOT NULL CHECK (kind IN ('checkout', 'automatic')),
  status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
  amount_cents         bigint NOT NULL CHECK (amount_cents > 0),
  bonus_cents          bigint NOT NULL DEFAULT 0,
  save_card            boolean NOT NULL DEFAULT false,
  customer_ref         text,
  checkout_session_id  text UNIQUE,
  checkout_url         text,
  payment_intent_id    text UNIQUE,
  charge_id            text,
  payment_method_id    text,
  card_brand           text,
  card_last4           text,
  receipt_url          text,
  failure_code         text,
  failure_message      text,
  ledger_line_id       uuid REFERENCES ledger_entries(id),
  refunded_cents       bigint NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= amount_cents),
  bonus_forfeited_cents bigint NOT NULL DEFAULT 0,
  -- An automatic charge: when the worker may (next) try it; a claim pushes it ahead (a lease).
  next_attempt_at      timestamptz,
  attempts             integer NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL,
  paid_at              timestamptz,
  CHECK ((status = 'succeeded') = (ledger_line_id IS NOT NULL))
);
CREATE INDEX card_payments_account ON card_payments (account_id, mode, seq DESC);
-- At most one automatic top-up open per account.
CREATE UNIQUE INDEX card_payments_one_automatic ON card_payments (account_id) WHERE kind = 'automatic' AND status = 'pending';
CREATE INDEX card_payments_automatic_due ON card_payments (next_attempt_at) WHERE kind = 'automatic' AND status = 'pending';

-- A refund of a card top-up (the operator's, or one the processor reports).
CREATE TABLE card_refunds (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                   bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  card_payment_id       uuid NOT NULL REFERENCES card_payments(id),
  account_id            uuid NOT NULL REFERENCES accounts(id),
  amount_cents          bigint NOT NULL CHECK (amount_cents > 0),
  status                text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  processor_refund_id   text UNIQUE,
  ledger_line_id        uuid REFERENCES ledger_entries(id),
  bonus_forfeited_cents bigint NOT NULL DEFAULT 0,
  source                text NOT NULL CHECK (source IN ('operator', 'processor')),
  failure_message       text,
  created_at            timestamptz NOT NULL,
  CHECK ((status = 'succeeded') = (ledger_line_id IS NOT NULL))
);
CREATE INDEX card_refunds_payment ON card_refunds (card_payment_id, seq);

-- The automatic top-up's failures: after one, no new attempt before retry_after (a day).
CREATE TABLE auto_top_up_state (
  account_id            uuid PRIMARY KEY REFERENCES accounts(id),
  failing_since         timestamptz,
  retry_after           timestamptz,
  last_failure_code     text,
  last_failure_message  text,
  last_failure_at       timestamptz
);

-- The processor's events, stored before anything is done with them (as carrier reports are).
CREATE TABLE processor_events (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  processor        text NOT NULL CHECK (processor IN ('stripe', 'simulated')),
  event_id         text NOT NULL,
  type             text NOT NULL,
  payload          jsonb NOT NULL,
  received_at      timestamptz NOT NULL DEFAULT now(),
  processed_at     timestamptz,
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  UNIQUE (processor, event_id)
);
CREATE INDEX processor_events_due ON processor_events (next_attempt_at) WHERE processed_at IS NULL;
