-- Issue 23, §5: people call back. A call to a customer's rented number is recorded as a call of
-- that customer with direction 'inbound'. As for an outbound call, to_e164 is the other party's
-- number (here: the caller) and from_e164 the customer's line (here: the number called), so what
-- a call says about the person (its phone, a do-not-call entry it records) reads the same way.
-- Inbound calls are never queued (they start in_progress): the dialler never claims them, and the
-- queries that count outbound attempts and earlier outcomes (frequency caps, no redial after a
-- hang-up, duplicate open requests) read outbound calls only.
ALTER TABLE calls ADD COLUMN direction text NOT NULL DEFAULT 'outbound' CHECK (direction IN ('outbound', 'inbound'));
-- What answered the inbound call: forward (to the customer's own phone), agent or message; null for outbound calls.
ALTER TABLE calls ADD COLUMN inbound_action text CHECK (inbound_action IN ('forward', 'agent', 'message'));

-- One open request per number and customer is an outbound rule: a person calling back while a
-- request to them is open is a second call, not a duplicate request.
DROP INDEX calls_one_open_per_number;
CREATE UNIQUE INDEX calls_one_open_per_number ON calls (customer_id, to_e164)
  WHERE status IN ('queued', 'dialing', 'ringing', 'in_progress') AND direction = 'outbound';

-- The number a call came in on, found by the number (the voice webhook names only To).
CREATE INDEX phone_numbers_inbound ON phone_numbers (e164) WHERE kind = 'rented' AND status IN ('active', 'payment_due');
