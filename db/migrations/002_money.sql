-- Money: per-mode money state of an account, the immutable ledger, holds of running calls,
-- bonus grants, the console's activity log and the monthly-minimum record.

-- One row per account and mode. Live: the real balance. Test: priced, never charged, so its
-- balance stays 0 while its holds, spend and minutes are counted like live ones (caps and
-- concurrency apply in test mode too). Every change to a row comes with a ledger line or a hold.
CREATE TABLE account_money (
  account_id                  uuid NOT NULL REFERENCES accounts(id),
  mode                        text NOT NULL CHECK (mode IN ('test', 'live')),
  balance_cents               bigint NOT NULL DEFAULT 0,
  paid_cents                  bigint NOT NULL DEFAULT 0,
  bonus_cents                 bigint NOT NULL DEFAULT 0 CHECK (bonus_cents >= 0),
  reserved_cents              bigint NOT NULL DEFAULT 0 CHECK (reserved_cents >= 0),
  open_calls                  integer NOT NULL DEFAULT 0 CHECK (open_calls >= 0),
  -- settled spend of the current UTC day and month (holds count through reserved_cents)
  spend_day                   date,
  spend_day_cents             bigint NOT NULL DEFAULT 0,
  spend_month                 date,
  spend_month_cents           bigint NOT NULL DEFAULT 0,
  -- call minutes used in the current UTC month: decides the rate tier
  minutes_month               date,
  minutes_used                integer NOT NULL DEFAULT 0,
  -- low-balance warnings: the reference is the last top-up; the stage is the deepest crossed
  last_top_up_cents           bigint,
  low_balance_stage           text NOT NULL DEFAULT 'zero',
  auto_top_up_threshold_cents bigint CHECK (auto_top_up_threshold_cents >= 0),
  auto_top_up_amount_cents    bigint CHECK (auto_top_up_amount_cents >= 2500),
  PRIMARY KEY (account_id, mode),
  CHECK (balance_cents = paid_cents + bonus_cents)
);

ALTER TABLE customers
  ADD COLUMN reserved_cents    bigint NOT NULL DEFAULT 0 CHECK (reserved_cents >= 0),
  ADD COLUMN open_calls        integer NOT NULL DEFAULT 0 CHECK (open_calls >= 0),
  ADD COLUMN spend_day         date,
  ADD COLUMN spend_day_cents   bigint NOT NULL DEFAULT 0,
  ADD COLUMN spend_month       date,
  ADD COLUMN spend_month_cents bigint NOT NULL DEFAULT 0,
  -- the first time the customer was ready: "taken live" for the monthly minimum
  ADD COLUMN first_ready_at    timestamptz;

-- Ledger lines are immutable: a correction is a new line. For applied lines the money row's
-- balance moves in the same transaction, and balance_after_cents records where it landed.
CREATE TABLE ledger_entries (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                  bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id           uuid NOT NULL REFERENCES accounts(id),
  mode                 text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id          uuid REFERENCES customers(id),
  type                 text NOT NULL CHECK (type IN ('usage', 'top_up', 'bonus', 'refund', 'minimum', 'bonus_expired')),
  cause                text NOT NULL,
  amount_cents         bigint NOT NULL,
  cash_cents           bigint NOT NULL,
  bonus_cents          bigint NOT NULL,
  balance_after_cents  bigint NOT NULL,
  applied              boolean NOT NULL,
  minutes              integer,
  reference            text,
  payment_reference    text,
  description          text NOT NULL,
  created_at           timestamptz NOT NULL,
  CHECK (amount_cents = cash_cents + bonus_cents),
  CHECK (applied = (mode = 'live'))
);
CREATE INDEX ledger_account ON ledger_entries (account_id, mode, seq DESC);
CREATE INDEX ledger_customer ON ledger_entries (customer_id, seq DESC);

CREATE FUNCTION ledger_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger lines are immutable; write a correcting line instead';
END $$;
CREATE TRIGGER ledger_entries_no_change BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_immutable();
-- Row triggers do not fire on TRUNCATE.
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_immutable();

-- Bonus credit, spent before cash, earliest expiry first; what is left at expiry is written off.
CREATE TABLE bonus_grants (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id       uuid NOT NULL REFERENCES accounts(id),
  granted_cents    bigint NOT NULL CHECK (granted_cents > 0),
  remaining_cents  bigint NOT NULL CHECK (remaining_cents >= 0),
  granted_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL
);
CREATE INDEX bonus_grants_open ON bonus_grants (account_id, expires_at) WHERE remaining_cents > 0;

-- The hold of a running call. Resolves exactly once: settled by the call's end or released by
-- the sweeper; the UPDATE … WHERE status = 'open' that wins decides which.
CREATE TABLE holds (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id       uuid NOT NULL REFERENCES accounts(id),
  mode             text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id      uuid NOT NULL REFERENCES customers(id),
  reference        text NOT NULL,
  amount_cents     bigint NOT NULL CHECK (amount_cents >= 0),
  status           text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'settled', 'released')),
  charged_cents    bigint,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  resolved_at      timestamptz,
  UNIQUE (account_id, reference)
);
CREATE INDEX holds_expiring ON holds (expires_at) WHERE status = 'open';

-- What the console shows of refused call starts (and other account activity).
CREATE TABLE activity_log (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id   uuid NOT NULL REFERENCES accounts(id),
  mode         text NOT NULL,
  customer_id  uuid REFERENCES customers(id),
  kind         text NOT NULL,
  reason       text,
  reference    text,
  detail       jsonb,
  created_at   timestamptz NOT NULL
);
CREATE INDEX activity_log_account ON activity_log (account_id, seq DESC);

-- The monthly minimum is charged once per customer and month, however often the job runs.
CREATE TABLE monthly_minimums (
  customer_id  uuid NOT NULL REFERENCES customers(id),
  month        date NOT NULL,
  charged_cents bigint NOT NULL,
  PRIMARY KEY (customer_id, month)
);
