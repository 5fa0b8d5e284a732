-- Every signature of the reseller agreement. The account row keeps the version in force and when
-- it was signed (what readiness and go-live read); this table keeps each signature, so an operator
-- can see which versions an account signed and when. Written in the transaction that signs.
CREATE TABLE agreement_signatures (
  seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts(id),
  version     text NOT NULL,
  signed_at   timestamptz NOT NULL
);
CREATE INDEX agreement_signatures_account ON agreement_signatures (account_id, seq DESC);

-- Signatures made before this table: the one on file. Its date may be that of an earlier version
-- (re-signing used to keep the first date), which is all that was recorded.
INSERT INTO agreement_signatures (account_id, version, signed_at)
SELECT id, agreement_version, agreement_signed_at
  FROM accounts
 WHERE agreement_version IS NOT NULL AND agreement_signed_at IS NOT NULL
 ORDER BY seq;
