-- The console's calls (issue 21): what each gate of a dialled request read at the dial, kept with
-- its compliance record (calling window, do-not-call registries and their load dates, caps,
-- emergency closures, caller ID; actors/scheduler/admission-checks.ts); null for calls dialled
-- before this migration. Like the rest of the record, written once and never changed.
ALTER TABLE call_compliance_records ADD COLUMN checks jsonb;

-- A call's refused starts in the activity log, for its compliance trail.
CREATE INDEX activity_log_reference ON activity_log (account_id, reference) WHERE reference IS NOT NULL;

-- The console's call list (db/console-calls.ts) filters an account's calls by status, outcome and
-- when they were requested, newest first: each filter walks only its own calls, so a rare outcome
-- in an account of 10,000 calls reads a page, not the account. The date filter uses
-- calls_account_created (account, mode, created_at), made by 031 for the overview too.
CREATE INDEX calls_account_status ON calls (account_id, mode, status, seq DESC);
CREATE INDEX calls_account_outcome ON calls (account_id, mode, outcome, seq DESC);
