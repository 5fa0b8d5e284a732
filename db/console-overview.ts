import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';
import { READINESS_FACTS_SQL, type ReadinessRow } from './readiness.ts';

/** One UTC day of the console overview's chart. */
export interface CallDay {
  date: string;
  placed: number;
  connected: number;
  appointments: number;
}

/**
 * The calls requested on each of the `days` UTC days ending with `today` (YYYY-MM-DD), oldest
 * first, days without calls as zeros: how many were requested, how many of those a person
 * answered (`connectedOutcomes`), how many booked an appointment. One index range
 * (calls_account_created, migration 031).
 */
const CALLS_BY_DAY = `
  WITH bounds AS (SELECT $3::date - ($4::int - 1) AS first_day, $3::date AS last_day),
  per_day AS (
    SELECT (c.created_at AT TIME ZONE 'UTC')::date AS day,
           count(*)::int AS placed,
           (count(*) FILTER (WHERE c.outcome = ANY($5::text[])))::int AS connected,
           count(c.appointment_id)::int AS appointments
      FROM calls c, bounds b
     WHERE c.account_id = $1 AND c.mode = $2
       AND c.created_at >= b.first_day::timestamp AT TIME ZONE 'UTC'
       AND c.created_at < (b.last_day + 1)::timestamp AT TIME ZONE 'UTC'
     GROUP BY 1
  )
  SELECT to_char(d.day, 'YYYY-MM-DD') AS date, COALESCE(p.placed, 0) AS placed,
         COALESCE(p.connected, 0) AS connected, COALESCE(p.appointments, 0) AS appointments
    FROM bounds b
   CROSS JOIN LATERAL generate_series(b.first_day, b.last_day, interval '1 day') AS g(at)
   CROSS JOIN LATERAL (SELECT g.at::date AS day) AS d
    LEFT JOIN per_day p ON p.day = d.day
   ORDER BY d.day`;

const READINESS_WHERE = 'WHERE c.id = $1';
if (!READINESS_FACTS_SQL.includes(READINESS_WHERE)) throw new Error('the readiness statement no longer selects one customer by c.id = $1');

/**
 * The readiness row of each of the account's newest `limit` customers of `mode` (the readiness
 * endpoint's own statement, over the account instead of one customer), with the customer's name.
 */
const ACCOUNT_READINESS = `
  SELECT r.*, cu.name AS customer_name
    FROM (${READINESS_FACTS_SQL.replace(
      READINESS_WHERE,
      'WHERE c.id IN (SELECT id FROM customers WHERE account_id = $1 AND mode = $3 ORDER BY seq DESC LIMIT $4)',
    )}) AS r
    JOIN customers cu ON cu.id = r.customer_id
   ORDER BY cu.seq DESC`;

export function consoleOverviewReads(db: Queryable) {
  return {
    async callsByDay(accountId: string, mode: Mode, today: string, days: number, connectedOutcomes: readonly string[]): Promise<CallDay[]> {
      const { rows } = await db.query(CALLS_BY_DAY, [accountId, mode, today, days, connectedOutcomes]);
      return rows;
    },

    /** `now` decides which onboarding links have expired, as for one customer's readiness. */
    async customersReadiness(accountId: string, mode: Mode, now: Date, limit: number): Promise<(ReadinessRow & { customer_name: string })[]> {
      const { rows } = await db.query(ACCOUNT_READINESS, [accountId, now, mode, limit]);
      return rows;
    },
  };
}
