-- Issue 23: what the called person hears. The business's registered name (the name the law wants
-- in an artificial-voice call's identification, 47 CFR 64.1200(b)(1); distinct from brand_name)
-- and the customer's call settings (voicemail, turn detection, retries, inbound calls, recording
-- objections, voice), stored as the fields the reseller set: actors/customer/call-settings.ts
-- fills in the documented defaults.
ALTER TABLE customers ADD COLUMN registered_name text;
ALTER TABLE customers ADD COLUMN call_settings jsonb NOT NULL DEFAULT '{}'::jsonb;
