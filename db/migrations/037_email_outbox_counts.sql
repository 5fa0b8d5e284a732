-- The onboarding email limits count an account's emails of one kind in the last 24 hours
-- (db/email-outbox.ts countEmailsSince), on every mint with an email: an index, not a scan.
CREATE INDEX email_outbox_counts ON email_outbox (account_id, kind, created_at);
