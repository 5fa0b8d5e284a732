-- A call request's external_ref guards against duplicates only while a request with it is open,
-- and only within one customer (spec: "while a request for a number is open"; issue 20 §3). The
-- ref once stayed unique for the account and mode forever: a later request with it, after the
-- first ended or for another customer, got the old request back and nothing was queued.
ALTER TABLE calls DROP CONSTRAINT IF EXISTS calls_account_id_mode_external_ref_key;
CREATE UNIQUE INDEX calls_one_open_per_ref ON calls (customer_id, external_ref)
  WHERE external_ref IS NOT NULL AND status IN ('queued', 'dialing', 'ringing', 'in_progress');
