-- The consent a reseller holds for the called party, carried with the request (issue 13 §1), and
-- the line type the request was admitted on. Absent consent is 'none'. Read back only by the
-- reseller's own API (docs/api.md); the dialler ends a request whose consent expired.
ALTER TABLE calls
  ADD COLUMN consent_type text NOT NULL DEFAULT 'none'
    CHECK (consent_type IN ('prior_express_written', 'prior_express', 'existing_business_relationship', 'none')),
  ADD COLUMN consent_obtained_at timestamptz,
  ADD COLUMN consent_source text,
  ADD COLUMN consent_evidence_ref text,
  ADD COLUMN consent_expires_at timestamptz,
  ADD COLUMN line_type text
    CHECK (line_type IN ('mobile', 'landline', 'business_landline', 'voip', 'unknown'));

-- Line types as the carrier's lookup service answered them, per carrier and number; an answer
-- older than LINE_TYPE_CACHE_DAYS (db/line-types.ts) is asked again.
CREATE TABLE line_type_lookups (
  carrier text NOT NULL,
  e164 text NOT NULL,
  line_type text NOT NULL CHECK (line_type IN ('mobile', 'landline', 'business_landline', 'voip', 'unknown')),
  looked_up_at timestamptz NOT NULL,
  PRIMARY KEY (carrier, e164)
);

-- The compliance record of a call: what was checked when it was admitted to dial (the consent
-- held, the line type, what the rule required and why) and what the agent said to identify the
-- business and offer the opt-out. Written by the dialler at the dial, completed by the call actor
-- when the agent starts; never changed after. Operators read it in the database (no API yet).
CREATE TABLE call_compliance_records (
  call_id uuid PRIMARY KEY REFERENCES calls (id),
  consent_type text NOT NULL,
  consent_obtained_at timestamptz,
  consent_source text,
  consent_evidence_ref text,
  consent_expires_at timestamptz,
  line_type text NOT NULL,
  required_consent text NOT NULL CHECK (required_consent IN ('prior_express_written', 'prior_express', 'none')),
  rules text[] NOT NULL,
  citations text[] NOT NULL,
  admitted_at timestamptz NOT NULL,
  identification text,
  opt_out_offered boolean,
  identified_at timestamptz
);
