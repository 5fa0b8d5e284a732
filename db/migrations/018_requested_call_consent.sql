-- Issue 20 §1: a consent of its own kind, `requested_call` (the called party asked for this call),
-- the only one Washington (RCW 80.36.400(2)) and Maine (10 M.R.S. § 1498) numbers accept; the
-- compliance record may then say a call required it. docs/compliance.md ("State auto-dialler laws").
ALTER TABLE calls DROP CONSTRAINT calls_consent_type_check;
ALTER TABLE calls ADD CONSTRAINT calls_consent_type_check
  CHECK (consent_type IN ('requested_call', 'prior_express_written', 'prior_express', 'existing_business_relationship', 'none'));

ALTER TABLE call_compliance_records DROP CONSTRAINT call_compliance_records_required_consent_check;
ALTER TABLE call_compliance_records ADD CONSTRAINT call_compliance_records_required_consent_check
  CHECK (required_consent IN ('requested_call', 'prior_express_written', 'prior_express', 'none'));
