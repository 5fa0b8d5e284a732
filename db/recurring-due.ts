import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/**
 * What an account's recurring items falling due by a day cost together (numbers' rent and
 * websites' hosting compete for the same balance): the early warnings of both rooms weigh a
 * renewal against all of it, not against its own price alone.
 */
export async function recurringDueBy(db: Queryable, accountId: string, mode: Mode, day: string): Promise<number> {
  const { rows } = await db.query(
    `SELECT (SELECT COALESCE(sum(monthly_cents), 0) FROM phone_numbers
              WHERE account_id = $1 AND mode = $2 AND status IN ('active', 'payment_due') AND renews_on <= $3)
          + (SELECT COALESCE(sum(hosting_cents_per_month), 0) FROM website_builds
              WHERE account_id = $1 AND mode = $2 AND status IN ('live', 'hosting_due') AND hosting_renews_on <= $3) AS due`,
    [accountId, mode, day],
  );
  return Number(rows[0].due);
}
