import { prepared, type Queryable } from './pool.ts';
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
const CALLS_BY_DAY = prepared(
  'console_calls_by_day',
  `WITH bounds AS (SELECT ($3::date - ($4::int - 1))::timestamp AT TIME ZONE 'UTC' AS first_at, ($3::date + 1)::timestamp AT TIME ZONE 'UTC' AS end_at),
   per_day AS (
     -- date_bin on a fixed 24-hour stride from the first day's UTC midnight: no time zone lookup per row.
     SELECT date_bin('24 hours', c.created_at, b.first_at) AS day_at,
            count(*)::int AS placed,
            (count(*) FILTER (WHERE c.outcome = ANY($5::text[])))::int AS connected,
            count(c.appointment_id)::int AS appointments
       FROM calls c, bounds b
      WHERE c.account_id = $1 AND c.mode = $2 AND c.created_at >= b.first_at AND c.created_at < b.end_at AND c.direction = 'outbound'
      GROUP BY 1
   )
   SELECT to_char(g.at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, COALESCE(p.placed, 0) AS placed,
          COALESCE(p.connected, 0) AS connected, COALESCE(p.appointments, 0) AS appointments
     FROM bounds b
    CROSS JOIN LATERAL generate_series(b.first_at, b.end_at - interval '24 hours', interval '24 hours') AS g(at)
     LEFT JOIN per_day p ON p.day_at = g.at
    ORDER BY g.at`,
);

const READINESS_WHERE = 'WHERE c.id = $1';
if (!READINESS_FACTS_SQL.includes(READINESS_WHERE)) throw new Error('the readiness statement no longer selects one customer by c.id = $1');

/**
 * The readiness row of each of the account's newest `limit` customers of `mode` (the readiness
 * endpoint's own statement, over the account instead of one customer), with the customer's name.
 */
const ACCOUNT_READINESS = prepared(
  'console_customers_readiness',
  `SELECT r.*, cu.name AS customer_name
     FROM (${READINESS_FACTS_SQL.replace(
       READINESS_WHERE,
       'WHERE c.id IN (SELECT id FROM customers WHERE account_id = $1 AND mode = $3 ORDER BY seq DESC LIMIT $4)',
     )}) AS r
     JOIN customers cu ON cu.id = r.customer_id
    ORDER BY cu.seq DESC`,
);

export function consoleOverviewReads(db: Queryable) {
  return {
    async callsByDay(accountId: string, mode: Mode, today: string, days: number, connectedOutcomes: readonly string[]): Promise<CallDay[]> {
      const { rows } = await db.query(CALLS_BY_DAY([accountId, mode, today, days, connectedOutcomes]));
      return rows;
    },

    /** `now` decides which onboarding links have expired, as for one customer's readiness. */
    async customersReadiness(accountId: string, mode: Mode, now: Date, limit: number): Promise<(ReadinessRow & { customer_name: string })[]> {
      const { rows } = await db.query(ACCOUNT_READINESS([accountId, now, mode, limit]));
      return rows;
    },
  };
}
