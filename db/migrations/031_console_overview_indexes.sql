-- The console overview's calls of the last 30 days (db/console-overview.ts): one index range of the
-- account's calls by the day they were requested, with the columns the counts read, so the
-- chart is an index-only scan however many calls the account has.
CREATE INDEX calls_account_created ON calls (account_id, mode, created_at) INCLUDE (outcome, appointment_id);
