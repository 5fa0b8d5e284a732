import { prepared, type Queryable } from './pool.ts';
import { READINESS_FACTS_SQL, type ReadinessRow } from './readiness.ts';

/**
 * Everything the dialler decides a claimed request on, read in one statement so the decision
 * rests on one consistent snapshot (the pure rule is actors/scheduler/admission.ts).
 */
export interface AdmissionRow {
  /** Why the called number may not be dialled for the account, or null if it may. */
  do_not_call: 'account_list' | 'national_registry' | null;
  /** The readiness row of the customer (the readiness endpoint's own statement); null if it is gone. */
  readiness: ReadinessRow | null;
  /**
   * The number a call shows: the customer's first working (active, or in its rent countdown)
   * rented number in its country, else its verified caller ID there.
   */
  caller_id: string | null;
  /**
   * The customer's dial attempts to the number since the caps' look-back, oldest first
   * (frequency-caps.ts); `clock_at`: when it was claimed on its customer's test clock, if it was.
   */
  attempts: { at: Date; outcome: string | null; ended_at: Date | null; clock_at: Date | null }[];
  /** Every jurisdiction an operator has closed to calling (emergency_closures), sorted. */
  emergency_closures: string[];
  /** The distinct outcomes of every call of the customer to the number, however old (no redial after a hang-up). */
  earlier_outcomes: (string | null)[];
}

// The readiness statement is embedded as it is ($1 customer, $2 now), so the call path and the
// readiness endpoint cannot read different facts; LEFT JOIN keeps a row for a customer that is gone.
// Attempts: the expression and predicate of the calls_attempts index (migration 014), bounded by
// $5, the caps' look-back; the request being admitted is not yet dialled, so it is not among them.
const ADMISSION = prepared(
  'admission_facts',
  `SELECT EXISTS (SELECT 1 FROM dnc_numbers WHERE account_id = $3 AND e164 = $4) AS dnc_own,
          EXISTS (SELECT 1 FROM dnc_registry WHERE e164 = $4) AS dnc_national,
          (SELECT n.e164 FROM phone_numbers n
            WHERE n.customer_id = r.customer_id AND n.status IN ('active', 'payment_due') AND n.country = r.country
            ORDER BY n.kind = 'rented' DESC, n.seq LIMIT 1) AS caller_id,
          a.attempt_at, a.attempt_outcome, a.attempt_ended_at, a.attempt_clock_at,
          ARRAY(SELECT jurisdiction FROM emergency_closures ORDER BY jurisdiction) AS emergency_closures,
          ARRAY(SELECT DISTINCT c.outcome FROM calls c WHERE c.customer_id = $1 AND c.to_e164 = $4 AND c.dialed_at IS NOT NULL AND c.direction = 'outbound') AS earlier_outcomes,
          r.*
     FROM (SELECT 1) AS one
     LEFT JOIN LATERAL (${READINESS_FACTS_SQL}) AS r ON true
     CROSS JOIN LATERAL (
       SELECT coalesce(array_agg(t.at ORDER BY t.at), '{}') AS attempt_at,
              coalesce(array_agg(t.outcome ORDER BY t.at), '{}') AS attempt_outcome,
              coalesce(array_agg(t.ended_at ORDER BY t.at), '{}') AS attempt_ended_at,
              coalesce(array_agg(t.clock_claimed_at ORDER BY t.at), '{}') AS attempt_clock_at
         FROM (SELECT COALESCE(c.dialed_at, c.claimed_at, c.updated_at) AS at, c.outcome, c.ended_at, c.clock_claimed_at
                 FROM calls c
                WHERE c.customer_id = $1 AND c.to_e164 = $4 AND (c.dialed_at IS NOT NULL OR c.status = 'completed') AND c.direction = 'outbound'
                  AND COALESCE(c.dialed_at, c.claimed_at, c.updated_at) > $5) AS t) AS a`,
);

/**
 * The admission facts of a request of `accountId`'s customer `customerId` to `toE164`, at `now`,
 * with the customer's attempts to the number dialled after `attemptsSince` (the caps' look-back).
 */
export async function loadAdmissionFacts(
  db: Queryable,
  request: { accountId: string; customerId: string; toE164: string; attemptsSince: Date },
  now: Date,
): Promise<AdmissionRow> {
  const { rows } = await db.query(ADMISSION([request.customerId, now, request.accountId, request.toE164, request.attemptsSince]));
  const { dnc_own, dnc_national, caller_id, attempt_at, attempt_outcome, attempt_ended_at, attempt_clock_at, emergency_closures, earlier_outcomes, ...readiness } = rows[0];
  return {
    do_not_call: dnc_own ? 'account_list' : dnc_national ? 'national_registry' : null,
    readiness: readiness.customer_id === null ? null : (readiness as ReadinessRow),
    caller_id,
    attempts: (attempt_at as Date[]).map((at, i) => ({ at, outcome: attempt_outcome[i], ended_at: attempt_ended_at[i], clock_at: attempt_clock_at[i] })),
    emergency_closures,
    earlier_outcomes,
  };
}
