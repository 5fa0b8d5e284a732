-- Issue 23 §1: the opening a call plays the instant its stream starts.
-- The synthesized audio of each piece of prepared speech (an opening segment, a voicemail
-- message), shared by every process: one row per customer, language, voice, synthesizer and
-- text (its sha256). μ-law 8 kHz mono, a whole number of 20 ms frames.
CREATE TABLE opening_audio (
  customer_id uuid NOT NULL REFERENCES customers (id),
  language text NOT NULL,
  voice text NOT NULL,
  synthesizer text NOT NULL,
  text_sha256 text NOT NULL,
  audio bytea NOT NULL,
  audio_sha256 text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, language, voice, synthesizer, text_sha256)
);

-- The compliance record keeps the opening as actually played (segments with their text and
-- whether each was played to its end, from the carrier's marks), its audio's sha256, its
-- language and when it started; the opt-out (how and when); when recording started.
ALTER TABLE call_compliance_records
  ADD COLUMN opening jsonb,
  ADD COLUMN opening_audio_sha256 text,
  ADD COLUMN opening_language text,
  ADD COLUMN opening_started_at timestamptz,
  ADD COLUMN opted_out_via text CHECK (opted_out_via IN ('dtmf', 'tool')),
  ADD COLUMN opted_out_at timestamptz,
  ADD COLUMN recording_started_at timestamptz;
