-- The console's developer and going-live pages (issue 21).

-- The reseller's company details, submitted in the console for the operator's business
-- verification. One row per account; a submission replaces the previous one.
CREATE TABLE account_business_details (
  account_id           uuid PRIMARY KEY REFERENCES accounts(id),
  legal_name           text NOT NULL,
  registration_number  text NOT NULL,
  country              text NOT NULL,
  address              text NOT NULL,
  website              text,
  contact_email        text NOT NULL,
  contact_phone        text,
  business_description text NOT NULL,
  submitted_at         timestamptz NOT NULL,
  -- who submitted it (console_users; a person removed later stays named by submitted_by_email)
  submitted_by_user_id uuid REFERENCES console_users(id),
  submitted_by_email   text
);

-- The operator's word on a review, shown to the reseller (why it was rejected); null when none.
ALTER TABLE accounts ADD COLUMN kyb_note text;

-- Who signed: the person of the account's console (name and address at signing). Null for a
-- signature the operator recorded (POST /admin/v1/accounts/:id/agreement).
ALTER TABLE agreement_signatures ADD COLUMN signed_by_user_id uuid REFERENCES console_users(id);
ALTER TABLE agreement_signatures ADD COLUMN signed_by text;

-- The first characters of the receiver's answer to an attempt, for the console's delivery log.
ALTER TABLE webhook_attempts ADD COLUMN response_excerpt text;
