-- Test clocks (issue 21): an account's clocks for its test customers, as Stripe's. A customer on
-- a clock has the schedules of its records (calling windows and retries, holds, renewals) run on
-- the clock's frozen_time instead of the process clock. Test mode only: a live customer can never
-- be on one (the CHECK), and a customer only on a clock of its own account (the foreign key).
CREATE TABLE test_clocks (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id  uuid NOT NULL REFERENCES accounts(id),
  name        text,
  frozen_time timestamptz NOT NULL,
  status      text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'advancing')),
  created_at  timestamptz NOT NULL,
  deleted_at  timestamptz,
  UNIQUE (id, account_id)
);
CREATE INDEX test_clocks_account ON test_clocks (account_id, seq DESC) WHERE deleted_at IS NULL;

ALTER TABLE customers ADD COLUMN test_clock_id uuid;
ALTER TABLE customers ADD CONSTRAINT customers_test_clock_same_account
  FOREIGN KEY (test_clock_id, account_id) REFERENCES test_clocks (id, account_id);
ALTER TABLE customers ADD CONSTRAINT customers_test_clock_test_mode_only
  CHECK (test_clock_id IS NULL OR mode = 'test');
CREATE INDEX customers_on_test_clock ON customers (test_clock_id) WHERE test_clock_id IS NOT NULL;

-- When a request of a customer on a test clock was claimed for dialling, on that clock: its
-- frequency caps count its attempts on the clock's time (db/admission.ts). Null for the others.
ALTER TABLE calls ADD COLUMN clock_claimed_at timestamptz;
