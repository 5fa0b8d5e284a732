-- An Idempotency-Key record keeps what the write did (a new resource or not), not an HTTP
-- status: the domain names no status, and the route that answered turns it into one again on a
-- replay (docs/decisions.md, "Refusals, crashes and supervision"). Records of the last 24 hours
-- are carried over: 201 and 202 were new resources (a write route answering 202 answers it
-- either way), 200 an existing one. `response_status` stays, no longer written, so a process of
-- the previous version can finish its request during a rolling restart; it is read only for such
-- records and can be dropped by a later migration.
ALTER TABLE idempotency_keys ADD COLUMN response_created boolean;
UPDATE idempotency_keys SET response_created = response_status IN (201, 202) WHERE response_status IS NOT NULL;
