-- Issue 20 §1, §2: national do-not-call registries by name, each with its last load (a load
-- replaces the registry's list; a registry too old stops calls to its country); the key mode that
-- added a do-not-call entry (only that mode may remove it); why a waiting request waits, in words;
-- how long a call's compliance record is kept.

-- A country may have several registries (GB: TPS and CTPS). Numbers loaded before this migration
-- belong to their country's registry (the first of actors/dnc/registries.ts).
ALTER TABLE dnc_registry ADD COLUMN registry text;
UPDATE dnc_registry SET registry = CASE country WHEN 'US' THEN 'US-NDNC' WHEN 'CA' THEN 'CA-DNCL' WHEN 'GB' THEN 'GB-TPS'
                                                WHEN 'AU' THEN 'AU-DNCR' ELSE country END;
ALTER TABLE dnc_registry ALTER COLUMN registry SET NOT NULL;
ALTER TABLE dnc_registry DROP CONSTRAINT dnc_registry_pkey;
ALTER TABLE dnc_registry ADD PRIMARY KEY (registry, e164);
CREATE INDEX dnc_registry_e164 ON dnc_registry (e164);

-- The last load of each registry: the operator sees it, readiness and the dialler judge its age.
CREATE TABLE dnc_registry_imports (
  registry    text PRIMARY KEY,
  country     text NOT NULL,
  source      text NOT NULL,
  numbers     integer NOT NULL,
  imported_at timestamptz NOT NULL
);
CREATE INDEX dnc_registry_imports_country ON dnc_registry_imports (country);
INSERT INTO dnc_registry_imports (registry, country, source, numbers, imported_at)
  SELECT DISTINCT ON (registry) registry, country, source, count(*) OVER (PARTITION BY registry), max(imported_at) OVER (PARTITION BY registry)
    FROM dnc_registry ORDER BY registry, imported_at DESC;

-- The mode of the key that added an entry (null: the callee's own request, or added before this).
ALTER TABLE dnc_numbers ADD COLUMN mode text CHECK (mode IN ('test', 'live'));

-- Why a queued request waits, for a person (waiting_reason is the code).
ALTER TABLE calls ADD COLUMN waiting_detail text;

-- Until when a call's compliance record must be kept (UWG § 7a(2) for calls to German numbers:
-- five years after each use of the consent); null where no law sets a term. Nothing deletes these
-- records; the trigger refuses a delete before the term.
ALTER TABLE call_compliance_records ADD COLUMN keep_until timestamptz;
CREATE FUNCTION call_compliance_records_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.keep_until IS NOT NULL AND OLD.keep_until > now() THEN
    RAISE EXCEPTION 'call compliance record % must be kept until %', OLD.call_id, OLD.keep_until;
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER call_compliance_records_keep BEFORE DELETE ON call_compliance_records
  FOR EACH ROW EXECUTE FUNCTION call_compliance_records_keep();
