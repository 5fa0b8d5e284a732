-- Websites (issue 15): a one-page site built for a customer, reviewed, taken live and hosted.
CREATE TABLE website_builds (
  id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id              uuid NOT NULL REFERENCES accounts(id),
  mode                    text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id             uuid NOT NULL REFERENCES customers(id),
  status                  text NOT NULL CHECK (status IN ('building', 'ready', 'live', 'failed', 'cancelled', 'hosting_due', 'suspended', 'purged')),
  -- The site's own address: <slug>.<sites domain>, or /sites/<slug>/ on the service's own host.
  slug                    text NOT NULL UNIQUE,
  brief                   text,
  -- Each revision's brief, in order (the last one is the one being built, or built).
  revision_briefs         text[] NOT NULL DEFAULT '{}',
  revisions_included      integer NOT NULL DEFAULT 1,
  build_fee_cents         integer NOT NULL CHECK (build_fee_cents >= 0),
  hosting_cents_per_month integer NOT NULL CHECK (hosting_cents_per_month >= 0),
  -- The build work: wanted until a worker finishes it; a claim lapses if its worker dies.
  build_wanted            boolean NOT NULL DEFAULT true,
  build_claimed_until     timestamptz,
  build_attempts          integer NOT NULL DEFAULT 0,
  -- The page as built (the preview until live, then what is served); null once purged.
  html                    text,
  built_at                timestamptz,
  -- The customer's own domain, pointed at the site by CNAME; verified when DNS says so.
  domain                  text,
  domain_verified_at      timestamptz,
  domain_checked_at       timestamptz,
  -- Hosting: the day of the month it renews on, the next renewal, and the countdowns.
  anchor_day              smallint CHECK (anchor_day BETWEEN 1 AND 31),
  hosting_renews_on       date,
  notice_sent_for         date,
  suspend_due_on          date,
  purge_due_on            date,
  live_at                 timestamptz,
  failed_at               timestamptz,
  failure_reason          text,
  cancelled_at            timestamptz,
  suspended_at            timestamptz,
  purged_at               timestamptz,
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL
);
CREATE INDEX website_builds_list ON website_builds (customer_id, seq DESC);
CREATE INDEX website_builds_wanted ON website_builds (seq) WHERE build_wanted;
CREATE INDEX website_builds_hosting ON website_builds (hosting_renews_on) WHERE status IN ('live', 'hosting_due');
CREATE INDEX website_builds_suspend_due ON website_builds (suspend_due_on) WHERE status = 'hosting_due';
CREATE INDEX website_builds_purge_due ON website_builds (purge_due_on) WHERE status = 'suspended';
-- A domain names one site at a time (a cancelled or purged site lets it go).
CREATE UNIQUE INDEX website_builds_domain ON website_builds (lower(domain))
  WHERE domain IS NOT NULL AND status NOT IN ('cancelled', 'purged', 'failed');
CREATE INDEX website_builds_domain_check ON website_builds (domain_checked_at) WHERE domain IS NOT NULL;
