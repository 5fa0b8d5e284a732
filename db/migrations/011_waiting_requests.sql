-- Queued requests by what they wait on: woken at once when that changes (a top-up, a customer
-- becoming ready, a cap raised) instead of at their next retry.
CREATE INDEX calls_waiting ON calls (account_id, waiting_reason) WHERE status = 'queued';
