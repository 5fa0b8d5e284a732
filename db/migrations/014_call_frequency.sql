-- Call-frequency caps (issue 13 §2): the admission statement reads one customer's dial attempts to
-- one number over the last year and a bit. An attempt is a row that was dialled (dialed_at) or
-- ended as a call (status completed: lost while being dialled, dialed_at never written), dated
-- when it was dialled, else when it was claimed. The expression and the predicate are repeated
-- word for word in db/admission.ts so the planner can use this index.
CREATE INDEX calls_attempts ON calls (customer_id, to_e164, (COALESCE(dialed_at, claimed_at, updated_at)))
  WHERE dialed_at IS NOT NULL OR status = 'completed';
