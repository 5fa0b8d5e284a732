import { prepared, type Queryable } from './pool.ts';
import { READINESS_FACTS_SQL, type ReadinessRow } from './readiness.ts';
import type { CustomerRow } from './customers.ts';

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
  /** The request still waits for the research of the called business (a pending prospect_research row). */
  research_pending: boolean;
  /** What that research found, once done (the agent's prospect notes, actors/call/prospect-notes.ts); null otherwise. */
  prospect_notes: string | null;
}

// The readiness statement is embedded as it is ($2 now, its customer the request's), so the call
// path and the readiness endpoint cannot read different facts; LEFT JOIN keeps a row for a
// customer that is gone. One statement for a round's requests, one row each (`request_index`,
// from 1): $1 customers, $3 accounts, $4 called numbers, $5 the caps' look-back of each, $6 the
// requests themselves. Attempts: the expression and predicate of the calls_attempts index
// (migration 014), bounded by the look-back; the request being admitted is not yet dialled, so it
// is not among them. Research: whether the request still waits for the research of the called
// business (prospect_research; the dialler asks researchGate only then).
const READINESS_OF_REQUEST = READINESS_FACTS_SQL.replace(/WHERE c\.id = \$1$/, 'WHERE c.id = q.customer_id');
if (READINESS_OF_REQUEST === READINESS_FACTS_SQL) throw new Error('READINESS_FACTS_SQL no longer ends with its customer condition');
const ADMISSION = prepared(
  'admission_facts_batch',
  `SELECT q.request_index,
          EXISTS (SELECT 1 FROM dnc_numbers WHERE account_id = q.account_id AND e164 = q.to_e164) AS dnc_own,
          EXISTS (SELECT 1 FROM dnc_registry WHERE e164 = q.to_e164) AS dnc_national,
          (SELECT n.e164 FROM phone_numbers n
            WHERE n.customer_id = r.customer_id AND n.status IN ('active', 'payment_due') AND n.country = r.country
            ORDER BY n.kind = 'rented' DESC, n.seq LIMIT 1) AS caller_id,
          a.attempt_at, a.attempt_outcome, a.attempt_ended_at, a.attempt_clock_at,
          ARRAY(SELECT jurisdiction FROM emergency_closures ORDER BY jurisdiction) AS emergency_closures,
          ARRAY(SELECT DISTINCT c.outcome FROM calls c WHERE c.customer_id = q.customer_id AND c.to_e164 = q.to_e164 AND c.dialed_at IS NOT NULL AND c.direction = 'outbound') AS earlier_outcomes,
          EXISTS (SELECT 1 FROM prospect_research pr WHERE pr.request_id = q.request_id AND pr.status = 'pending') AS research_pending,
          (SELECT pr.notes FROM prospect_research pr WHERE pr.request_id = q.research_of AND pr.status = 'done') AS prospect_notes,
          r.*
     FROM unnest($1::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::uuid[], $7::uuid[]) WITH ORDINALITY AS q(customer_id, account_id, to_e164, since, request_id, research_of, request_index)
     LEFT JOIN LATERAL (${READINESS_OF_REQUEST}) AS r ON true
     CROSS JOIN LATERAL (
       SELECT coalesce(array_agg(t.at ORDER BY t.at), '{}') AS attempt_at,
              coalesce(array_agg(t.outcome ORDER BY t.at), '{}') AS attempt_outcome,
              coalesce(array_agg(t.ended_at ORDER BY t.at), '{}') AS attempt_ended_at,
              coalesce(array_agg(t.clock_claimed_at ORDER BY t.at), '{}') AS attempt_clock_at
         FROM (SELECT COALESCE(c.dialed_at, c.claimed_at, c.updated_at) AS at, c.outcome, c.ended_at, c.clock_claimed_at
                 FROM calls c
                WHERE c.customer_id = q.customer_id AND c.to_e164 = q.to_e164 AND (c.dialed_at IS NOT NULL OR c.status = 'completed') AND c.direction = 'outbound'
                  AND COALESCE(c.dialed_at, c.claimed_at, c.updated_at) > q.since) AS t) AS a
    ORDER BY q.request_index`,
);

/** A request to admit: of `accountId`'s customer `customerId` to `toE164`; attempts dialled after `attemptsSince` count (the caps' look-back). */
export interface AdmissionRequest {
  accountId: string;
  customerId: string;
  toE164: string;
  attemptsSince: Date;
  /** The request's own id (its research); a request that has none waits for no research. */
  requestId?: string;
  /** Whose research the call's agent reads (its request's, shared by every attempt: prospect-notes.ts); `requestId` by default. */
  researchOf?: string;
}

/** The admission facts of one request at `now` (`loadAdmissionFactsOfMany` for one). */
export async function loadAdmissionFacts(db: Queryable, request: AdmissionRequest, now: Date): Promise<AdmissionRow> {
  return (await loadAdmissionFactsOfMany(db, [request], now))[0];
}

/**
 * The admission facts of each of `requests` at `now`, in their order, read in one statement (one
 * snapshot for the round): what each decides on is the same as if it were read alone.
 */
export async function loadAdmissionFactsOfMany(db: Queryable, requests: readonly AdmissionRequest[], now: Date): Promise<AdmissionRow[]> {
  if (requests.length === 0) return [];
  const { rows } = await db.query(
    ADMISSION([
      requests.map((r) => r.customerId),
      now,
      requests.map((r) => r.accountId),
      requests.map((r) => r.toE164),
      requests.map((r) => r.attemptsSince),
      requests.map((r) => r.requestId ?? null),
      requests.map((r) => r.researchOf ?? r.requestId ?? null),
    ]),
  );
  return rows.map((row) => {
    const { request_index, dnc_own, dnc_national, caller_id, attempt_at, attempt_outcome, attempt_ended_at, attempt_clock_at, emergency_closures, earlier_outcomes, research_pending, prospect_notes, ...readiness } = row;
    return {
      do_not_call: dnc_own ? 'account_list' : dnc_national ? 'national_registry' : null,
      readiness: readiness.customer_id === null ? null : (readiness as ReadinessRow),
      caller_id,
      attempts: (attempt_at as Date[]).map((at, i) => ({ at, outcome: attempt_outcome[i], ended_at: attempt_ended_at[i], clock_at: attempt_clock_at[i] })),
      emergency_closures,
      earlier_outcomes,
      research_pending,
      prospect_notes,
    };
  });
}

/** What a call's dial reads of its customer and request (call-media.ts `prepareLine`), handed in by the dialler. */
export interface DialContext {
  customer: CustomerRow;
  /** The calling language of the customer's country (`en-US` where none is set). */
  language: string;
  /** What research found about the called business (admission facts' `prospect_notes`). */
  prospectNotes: string | null;
}

/**
 * The customers of a round's dials with their calling language, in one statement: what each dial
 * would otherwise read alone (the customer row, then its country's language).
 */
export async function loadDialCustomers(db: Queryable, customerIds: readonly string[]): Promise<Map<string, { customer: CustomerRow; language: string }>> {
  const found = new Map<string, { customer: CustomerRow; language: string }>();
  if (customerIds.length === 0) return found;
  const { rows } = await db.query(
    `SELECT cu.*, co.calling_language AS dial_calling_language FROM customers cu LEFT JOIN countries co ON co.country = cu.country WHERE cu.id = ANY($1::uuid[])`,
    [[...new Set(customerIds)]],
  );
  for (const { dial_calling_language, ...customer } of rows) found.set(customer.id, { customer: customer as CustomerRow, language: dial_calling_language ?? 'en-US' });
  return found;
}
