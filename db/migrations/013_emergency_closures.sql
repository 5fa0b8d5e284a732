-- Jurisdictions an operator has closed to calling: La. R.S. 45:844.31 bans telephonic
-- solicitation into Louisiana while the governor's state of emergency lasts, and no feed says
-- when one is declared, so an operator switches it (PUT/DELETE /admin/v1/emergency_closures/
-- {jurisdiction}). The dialler's admission statement reads the whole table with each request
-- (db/admission.ts); a request to a number that may be in a closed jurisdiction waits
-- (docs/compliance.md, "Emergency closures"). Codes: 'US', 'US-LA', 'CA-BC', 'ES-MD'.
CREATE TABLE emergency_closures (
  jurisdiction text PRIMARY KEY CHECK (jurisdiction ~ '^[A-Z]{2}(-[A-Z]{2,3})?$'),
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  closed_at timestamptz NOT NULL
);
