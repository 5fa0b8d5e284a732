-- Request counters shared by every API process (SWITCHBOARD_RATE_LIMIT_STORE=postgres): one row
-- per limiter key and fixed window. UNLOGGED: a crash of the database resets the counters, which
-- only forgives the current window; nothing else depends on them.
CREATE UNLOGGED TABLE rate_limit_windows (
  key           text NOT NULL,
  window_start  timestamptz NOT NULL,
  count         integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
