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
  /** The customer's first active number in its own country: the caller ID a call would show. */
  caller_id: string | null;
  /** Every jurisdiction an operator has closed to calling (emergency_closures), sorted. */
  emergency_closures: string[];
}

// The readiness statement is embedded as it is ($1 customer, $2 now), so the call path and the
// readiness endpoint cannot read different facts; LEFT JOIN keeps a row for a customer that is gone.
const ADMISSION = prepared(
  'admission_facts',
  `SELECT EXISTS (SELECT 1 FROM dnc_numbers WHERE account_id = $3 AND e164 = $4) AS dnc_own,
          EXISTS (SELECT 1 FROM dnc_registry WHERE e164 = $4) AS dnc_national,
          (SELECT n.e164 FROM phone_numbers n
            WHERE n.customer_id = r.customer_id AND n.status = 'active' AND n.country = r.country ORDER BY n.seq LIMIT 1) AS caller_id,
          ARRAY(SELECT jurisdiction FROM emergency_closures ORDER BY jurisdiction) AS emergency_closures,
          r.*
     FROM (SELECT 1) AS one
     LEFT JOIN LATERAL (${READINESS_FACTS_SQL}) AS r ON true`,
);

/** The admission facts of a request of `accountId`'s customer `customerId` to `toE164`, at `now`. */
export async function loadAdmissionFacts(
  db: Queryable,
  request: { accountId: string; customerId: string; toE164: string },
  now: Date,
): Promise<AdmissionRow> {
  const { rows } = await db.query(ADMISSION([request.customerId, now, request.accountId, request.toE164]));
  const { dnc_own, dnc_national, caller_id, emergency_closures, ...readiness } = rows[0];
  return {
    do_not_call: dnc_own ? 'account_list' : dnc_national ? 'national_registry' : null,
    readiness: readiness.customer_id === null ? null : (readiness as ReadinessRow),
    caller_id,
    emergency_closures,
  };
}
