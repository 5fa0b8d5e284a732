-- Money: the itemised ledger and the holds of running calls.

-- Ledger lines are immutable: a correction is a new line. For applied lines the account row's
-- balance_cents moves in the same transaction, and balance_after_cents records where it landed.
CREATE TABLE ledger_entries (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                  bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id           uuid NOT NULL REFERENCES accounts(id),
  mode                 text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id          uuid REFERENCES customers(id),
  type                 text NOT NULL,
  cause                text NOT NULL,
  amount_cents         bigint NOT NULL,
  cash_cents           bigint NOT NULL DEFAULT 0,
  bonus_cents          bigint NOT NULL DEFAULT 0,
  balance_after_cents  bigint NOT NULL,
  applied              boolean NOT NULL,
  reference            text,
  payment_reference    text,
  description          text NOT NULL,
  created_at           timestamptz NOT NULL
);
CREATE INDEX ledger_account ON ledger_entries (account_id, mode, seq DESC);
CREATE INDEX ledger_customer ON ledger_entries (customer_id, created_at);

CREATE FUNCTION ledger_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger lines are immutable; write a correcting line instead';
END $$;
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_immutable();

-- A hold of a running call. Resolves exactly once: settled by the call's end or released by the
-- sweeper; the conditional UPDATE on status = 'open' decides which.
CREATE TABLE holds (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id      uuid NOT NULL REFERENCES accounts(id),
  mode            text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id     uuid NOT NULL REFERENCES customers(id),
  reference       text NOT NULL,
  amount_cents    bigint NOT NULL CHECK (amount_cents >= 0),
  minutes_at_start integer NOT NULL,
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'settled', 'released')),
  charged_cents   bigint,
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  resolved_at     timestamptz,
  UNIQUE (account_id, reference)
);
CREATE INDEX holds_open ON holds (expires_at) WHERE status = 'open';
CREATE INDEX holds_customer_open ON holds (customer_id) WHERE status = 'open';
