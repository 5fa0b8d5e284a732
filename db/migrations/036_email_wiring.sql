-- Issue 22's emails, asked for by the facts they tell (email_outbox, 033).

-- A password reset the person asked for themselves is now an email in the outbox, written with
-- the reset (its link sealed there). A link still waiting here for a sender that did not exist
-- yet becomes that email (the same sealed link), then the copy kept here goes.
INSERT INTO email_outbox (account_id, mode, kind, audience, to_address, dedupe_key, data, secret_sealed, created_at)
SELECT u.account_id, 'live', 'password_reset', 'person', lower(u.email), 'password_reset:' || r.id,
       jsonb_build_object('expires_at', to_char(r.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
       r.link_sealed, r.created_at
  FROM console_password_resets r JOIN console_users u ON u.id = r.user_id
 WHERE r.link_sealed IS NOT NULL AND r.delivered_at IS NULL AND r.used_at IS NULL AND r.expires_at > now() AND u.removed_at IS NULL
ON CONFLICT (account_id, dedupe_key) DO NOTHING;

DROP INDEX IF EXISTS console_password_resets_undelivered;
ALTER TABLE console_password_resets
  DROP COLUMN link_sealed,
  DROP COLUMN delivered_at;

-- The address an onboarding link was emailed to on the reseller's behalf (POST
-- /v1/customers/:id/onboarding_link with `email`), shown with the link; null when it was not.
ALTER TABLE onboarding_links ADD COLUMN emailed_to text;
