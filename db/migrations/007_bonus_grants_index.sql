-- The grants index without a predicate on remaining_cents: a column in a partial index's
-- predicate counts as indexed, so every bonus spend (each charged call of an account with bonus
-- credit) was a non-HOT update that also wrote both indexes. Queries still filter on
-- remaining_cents > 0; an account has one grant per large top-up, so the index stays small.
DROP INDEX bonus_grants_open;
CREATE INDEX bonus_grants_account ON bonus_grants (account_id, expires_at);
