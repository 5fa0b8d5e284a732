-- Issue 23 §3, machines and voicemail: the carrier's asynchronous answering-machine verdict lands
-- in the carrier inbox like every other report (kind `amd`), and the call's compliance record
-- keeps the verdict, when it came, and what was left on the machine.
ALTER TABLE carrier_reports DROP CONSTRAINT carrier_reports_kind_check;
ALTER TABLE carrier_reports ADD CONSTRAINT carrier_reports_kind_check CHECK (kind IN ('status', 'recording', 'amd'));

-- `voicemail_left`: the text of the message played after the beep; null when none was left.
ALTER TABLE call_compliance_records
  ADD COLUMN amd_verdict text,
  ADD COLUMN amd_at timestamptz,
  ADD COLUMN voicemail_left text;

-- When the carrier started recording (after the opening's notice; migration 039 adds it where that
-- runs first): an answered call's `call.completed` waits for a recording only when one was started.
ALTER TABLE call_compliance_records ADD COLUMN IF NOT EXISTS recording_started_at timestamptz;
