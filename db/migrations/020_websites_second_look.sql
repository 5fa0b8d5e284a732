-- Issue 20: the business's own phone on a customer (its site shows it), revocable previews
-- that lapse, and domain claims that only block once DNS proves them.

-- The business's own number (E.164, in the customer's country): its website's number. Null: none shown.
ALTER TABLE customers ADD COLUMN phone text;

-- A preview's token is a MAC of the build's id and this nonce: a new nonce (a re-issue) ends the
-- old address. The preview lapses at preview_expires_at (30 days after the build or re-issue).
ALTER TABLE website_builds ADD COLUMN preview_nonce text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', '');
ALTER TABLE website_builds ADD COLUMN preview_expires_at timestamptz;
UPDATE website_builds SET preview_expires_at = built_at + interval '30 days' WHERE built_at IS NOT NULL;

-- When the domain was claimed (or last lost its verification): an unverified claim lapses 7 days on.
ALTER TABLE website_builds ADD COLUMN domain_claimed_at timestamptz;
UPDATE website_builds SET domain_claimed_at = updated_at WHERE domain IS NOT NULL;

-- Only a claim DNS has verified holds a domain: unverified claims of one name may be many.
DROP INDEX website_builds_domain;
CREATE UNIQUE INDEX website_builds_domain ON website_builds (lower(domain))
  WHERE domain IS NOT NULL AND domain_verified_at IS NOT NULL AND status NOT IN ('cancelled', 'purged', 'failed');
CREATE INDEX website_builds_domain_name ON website_builds (lower(domain)) WHERE domain IS NOT NULL;
