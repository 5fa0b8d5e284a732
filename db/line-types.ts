import type { Queryable } from './pool.ts';
import type { LineType } from '../runtime/types.ts';

/**
 * The cache of carrier line-type lookups (table line_type_lookups). A number's type changes when
 * it is ported (landline to mobile, mostly), so an answer is trusted for LINE_TYPE_CACHE_DAYS
 * and then asked again; the lookup's cost is the service's (issue 13: the price list has no item).
 */
export const LINE_TYPE_CACHE_DAYS = 30;

export function createLineTypeRepository(db: Queryable) {
  return {
    /** The cached type of `e164` at `carrier`, if looked up less than LINE_TYPE_CACHE_DAYS before `now`. */
    async fresh(carrier: string, e164: string, now: Date): Promise<LineType | null> {
      const { rows } = await db.query(
        `SELECT line_type FROM line_type_lookups WHERE carrier = $1 AND e164 = $2 AND looked_up_at > $3::timestamptz - make_interval(days => $4)`,
        [carrier, e164, now, LINE_TYPE_CACHE_DAYS],
      );
      return rows[0]?.line_type ?? null;
    },

    async save(carrier: string, e164: string, lineType: LineType, now: Date): Promise<void> {
      await db.query(
        `INSERT INTO line_type_lookups (carrier, e164, line_type, looked_up_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (carrier, e164) DO UPDATE SET line_type = EXCLUDED.line_type, looked_up_at = EXCLUDED.looked_up_at`,
        [carrier, e164, lineType, now],
      );
    },
  };
}
