-- A request is not a call (issue 23 §4): a request no one answered is tried again inside its
-- life, each attempt its own calls row (its own hold, charge, call.completed and compliance
-- record) under the request. The request's id is its first attempt's id; `attempt` counts 1, 2, …
-- `retry_at` on an ended attempt: when the request's next attempt was planned for; null when none
-- is planned or the planned one ended without a dial (cancelled, expired, blocked).
ALTER TABLE calls ADD COLUMN request_id uuid;
ALTER TABLE calls ADD COLUMN attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1);
ALTER TABLE calls ADD COLUMN retry_at timestamptz;
UPDATE calls SET request_id = id;
ALTER TABLE calls ALTER COLUMN request_id SET NOT NULL;
ALTER TABLE calls ADD CONSTRAINT calls_request FOREIGN KEY (request_id) REFERENCES calls (id);
-- One row per attempt of a request; also how a request's attempts are read.
CREATE UNIQUE INDEX calls_request_attempt ON calls (request_id, attempt);

-- A row inserted without a request (every first attempt) is its own request.
CREATE FUNCTION calls_own_request() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.request_id := COALESCE(NEW.request_id, NEW.id);
  RETURN NEW;
END $$;
CREATE TRIGGER calls_own_request BEFORE INSERT ON calls FOR EACH ROW EXECUTE FUNCTION calls_own_request();

-- A planned attempt that ends without being dialled (cancelled, expired, blocked by a gate,
-- whoever ends it) withdraws the retry its previous attempt announced.
CREATE FUNCTION calls_retry_withdrawn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE calls SET retry_at = NULL WHERE request_id = NEW.request_id AND attempt = NEW.attempt - 1 AND retry_at IS NOT NULL;
  RETURN NULL;
END $$;
CREATE TRIGGER calls_retry_withdrawn AFTER UPDATE OF status ON calls FOR EACH ROW
  WHEN (NEW.attempt > 1 AND NEW.dialed_at IS NULL AND NEW.status IN ('cancelled', 'expired', 'blocked') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION calls_retry_withdrawn();
