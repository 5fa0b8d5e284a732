-- Numbers as a resource (issue 14): rented at the carrier or verified as the customer's own
-- caller ID, with a monthly rent, a renewal date, a countdown to release and a verification.
ALTER TABLE phone_numbers DROP CONSTRAINT phone_numbers_status_check;
ALTER TABLE phone_numbers
  ADD CONSTRAINT phone_numbers_status_check CHECK (status IN ('verifying', 'active', 'payment_due', 'released', 'failed')),
  -- The carrier's id of the number (Twilio PN… of an IncomingPhoneNumber or an OutgoingCallerId):
  -- what releasing it at the carrier takes. Null for numbers assigned by hand and test numbers.
  ADD COLUMN carrier_ref text,
  ADD COLUMN monthly_cents integer NOT NULL DEFAULT 0 CHECK (monthly_cents >= 0),
  -- The day of the month rent falls due (1..31; a shorter month uses its last day).
  ADD COLUMN anchor_day smallint CHECK (anchor_day BETWEEN 1 AND 31),
  -- The next rent's date (UTC); null while verifying, after release, and for a failed caller ID.
  ADD COLUMN renews_on date,
  -- Set when rent could not be taken: the number is released at the start of this date (UTC).
  ADD COLUMN release_due_on date,
  -- The renewal the early warning (number.payment_due without release_due_on) was sent for.
  ADD COLUMN notice_sent_for date,
  -- A caller ID's verification: the code (sealed, secret-box) and when it stops counting.
  ADD COLUMN verification_code_sealed bytea,
  ADD COLUMN verification_expires_at timestamptz,
  ADD COLUMN failure_reason text,
  ADD COLUMN failed_at timestamptz,
  ADD COLUMN updated_at timestamptz;

UPDATE phone_numbers SET updated_at = created_at;
ALTER TABLE phone_numbers ALTER COLUMN updated_at SET NOT NULL;

-- Numbers that count for calls and readiness (a number in its countdown still dials).
DROP INDEX phone_numbers_customer;
CREATE INDEX phone_numbers_customer ON phone_numbers (customer_id) WHERE status IN ('active', 'payment_due');
-- The list endpoint, newest first.
CREATE INDEX phone_numbers_list ON phone_numbers (customer_id, seq DESC);
-- What the renewal job claims.
CREATE INDEX phone_numbers_renewal ON phone_numbers (renews_on) WHERE status IN ('active', 'payment_due');
CREATE INDEX phone_numbers_release_due ON phone_numbers (release_due_on) WHERE status = 'payment_due';
CREATE INDEX phone_numbers_verifying ON phone_numbers (verification_expires_at) WHERE status = 'verifying';
-- A caller ID is verified once per customer and mode at a time.
CREATE UNIQUE INDEX phone_numbers_one_caller_id ON phone_numbers (customer_id, e164)
  WHERE kind = 'caller_id' AND status IN ('verifying', 'active', 'payment_due');

-- Each period of a recurring charge, claimed once (money/writer.ts chargeRecurring): a second run
-- or process finds the period taken and charges nothing.
CREATE TABLE recurring_charges (
  item_id       uuid NOT NULL,
  period_start  date NOT NULL,
  item          text NOT NULL,
  account_id    uuid NOT NULL REFERENCES accounts(id),
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id   uuid NOT NULL REFERENCES customers(id),
  period_end    date NOT NULL,
  amount_cents  bigint NOT NULL CHECK (amount_cents >= 0),
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (item_id, period_start)
);

-- The last try of the provisioning number step for a live customer, when it did not rent one:
-- what provisioning shows as the step's blocker until a try succeeds.
CREATE TABLE number_orders (
  customer_id  uuid PRIMARY KEY REFERENCES customers(id),
  outcome      text NOT NULL,
  message      text NOT NULL,
  attempted_at timestamptz NOT NULL
);

-- Spec, Authentication §5: keys made before the numbers endpoints had their own permissions keep
-- what they could do: customers:read brings numbers:read, customers:write brings numbers:order.
UPDATE api_keys SET scopes = array_append(scopes, 'numbers:read')
 WHERE 'customers:read' = ANY (scopes) AND NOT 'numbers:read' = ANY (scopes);
UPDATE api_keys SET scopes = array_append(scopes, 'numbers:order')
 WHERE 'customers:write' = ANY (scopes) AND NOT 'numbers:order' = ANY (scopes);
