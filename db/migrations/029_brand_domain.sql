-- The brand's domain (issue 21): the name a reseller's customers use it at, pointed at the
-- service by a CNAME and checked against DNS like customers' website domains. Until DNS shows
-- the CNAME naming the account's own target the domain is only a claim: it serves nothing,
-- blocks nobody, and the service keeps handing out its public URL.
ALTER TABLE accounts
  ADD COLUMN domain_status     text NOT NULL DEFAULT 'none' CHECK (domain_status IN ('none', 'pending', 'verified', 'failed')),
  -- When the domain was set or changed (a pending claim fails 7 days on), its last DNS look, and
  -- when DNS last showed it pointed.
  ADD COLUMN domain_claimed_at  timestamptz,
  ADD COLUMN domain_checked_at  timestamptz,
  ADD COLUMN domain_verified_at timestamptz;

-- Domains set before this were never looked at: names are compared lower-case, and each is a
-- pending claim from now on (checked by the next run of the job).
UPDATE accounts SET domain = lower(rtrim(domain, '.')), domain_status = 'pending', domain_claimed_at = now() WHERE domain IS NOT NULL;
ALTER TABLE accounts ADD CONSTRAINT accounts_domain_status_consistent CHECK ((domain IS NULL) = (domain_status = 'none'));

-- A verified domain is one account's: DNS names one target per name, and this makes sure.
CREATE UNIQUE INDEX accounts_verified_domain ON accounts (lower(domain)) WHERE domain_status = 'verified';
CREATE INDEX accounts_domain_name ON accounts (lower(domain)) WHERE domain IS NOT NULL;
CREATE INDEX accounts_domain_check ON accounts (domain_checked_at) WHERE domain IS NOT NULL;
