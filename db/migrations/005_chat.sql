-- The sales-coach assistant: short-lived chat sessions. Only the SHA-256 of a session token is
-- stored, and no message or reply is stored anywhere: the browser keeps the thread.

CREATE TABLE chat_sessions (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id     uuid NOT NULL REFERENCES accounts(id),
  mode           text NOT NULL CHECK (mode IN ('test', 'live')),
  customer_id    uuid NOT NULL REFERENCES customers(id),
  token_hash     bytea NOT NULL UNIQUE,
  prefix         text NOT NULL,
  -- the reseller's identifier of the person, and the name shown to them
  end_user_ref   text NOT NULL,
  display_name   text,
  expires_at     timestamptz NOT NULL,
  revoked_at     timestamptz,
  last_used_at   timestamptz,
  -- answered messages; a slot is claimed by one conditional UPDATE and given back if no answer came
  messages_sent  integer NOT NULL DEFAULT 0 CHECK (messages_sent >= 0),
  message_limit  integer NOT NULL DEFAULT 200 CHECK (message_limit > 0),
  created_at     timestamptz NOT NULL,
  CHECK (messages_sent <= message_limit),
  CHECK (expires_at > created_at)
);
-- GET …/sessions: a customer's sessions, newest first.
CREATE INDEX chat_sessions_customer ON chat_sessions (customer_id, seq DESC);
-- DELETE …/sessions?end_user_ref=: every session of one person.
CREATE INDEX chat_sessions_person ON chat_sessions (customer_id, end_user_ref);
