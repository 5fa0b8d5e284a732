-- A number is a caller ID once per mode across every account (issue 20, §2): the carrier holds
-- one verified caller ID per number, and two accounts verifying the same number at once must not
-- both end with it active. Until now the rule was per customer. Later duplicates (possible only
-- through the simulated carrier, which verified any number again) are released; the oldest keeps it.
UPDATE phone_numbers n
   SET status = 'released', released_at = now(), renews_on = NULL, release_due_on = NULL,
       verification_code_sealed = NULL, updated_at = now()
 WHERE n.kind = 'caller_id' AND n.status IN ('verifying', 'active', 'payment_due')
   AND EXISTS (SELECT 1 FROM phone_numbers o
                WHERE o.kind = 'caller_id' AND o.status IN ('verifying', 'active', 'payment_due')
                  AND o.mode = n.mode AND o.e164 = n.e164 AND o.seq < n.seq);

DROP INDEX phone_numbers_one_caller_id;
CREATE UNIQUE INDEX phone_numbers_one_caller_id ON phone_numbers (mode, e164)
  WHERE kind = 'caller_id' AND status IN ('verifying', 'active', 'payment_due');

-- The verifications an account started in a day (the daily cap).
CREATE INDEX phone_numbers_caller_id_starts ON phone_numbers (account_id, mode, created_at) WHERE kind = 'caller_id';
