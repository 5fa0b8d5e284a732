-- Issue 23 §6: research of the called business before the first dial, and the callee's objection
-- to the recording.
--
-- One research per request (request_id: the request's id, which is its first call's id): the
-- website the reseller named, what was found (said to the agent, never returned by the API), and
-- whether it is still pending (the dialler waits for it, a bounded time), done (charged as a
-- `prospect` line in the transaction that stores the findings) or failed (nothing charged).
CREATE TABLE prospect_research (
  request_id   uuid PRIMARY KEY REFERENCES calls(id),
  account_id   uuid NOT NULL,
  mode         text NOT NULL,
  customer_id  uuid NOT NULL,
  website_url  text NOT NULL,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
  findings     jsonb,
  notes        text,
  failure      text,
  created_at   timestamptz NOT NULL,
  started_at   timestamptz,
  finished_at  timestamptz
);
CREATE INDEX prospect_research_pending ON prospect_research (created_at) WHERE status = 'pending';

-- The callee objected to being recorded (actors/call/recording-objection.ts): when, what was done
-- (recording stopped at the carrier and the call went on, or the call ended), and whether the
-- objection came before the recording started (then it never starts).
ALTER TABLE call_compliance_records ADD COLUMN recording_objected_at timestamptz;
ALTER TABLE call_compliance_records ADD COLUMN recording_objection_action text
  CHECK (recording_objection_action IN ('continue_unrecorded', 'end_call'));
ALTER TABLE call_compliance_records ADD COLUMN recording_stopped boolean;

-- What the call's transcript says (actors/call/call-summary.ts), written once, by the model when
-- one is configured (before the call's end is written) or by the rules at the end: the callback
-- time asked for (an outcome: in the summary sentence) and the objection heard (the operator's and
-- the console's only; the API never returns decision-making).
CREATE TABLE call_analyses (
  call_id      uuid PRIMARY KEY REFERENCES calls(id),
  callback_at  timestamptz,
  objection    text CHECK (objection IN ('price', 'timing', 'has_provider', 'not_interested', 'other')),
  source       text NOT NULL CHECK (source IN ('model', 'rules')),
  created_at   timestamptz NOT NULL
);
