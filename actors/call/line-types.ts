import type { Queryable } from '../../db/pool.ts';
import { createLineTypeRepository } from '../../db/line-types.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { Mode } from '../../runtime/types.ts';
import type { Carrier } from '../../telephony/carrier.ts';
import type { LineType } from '../../runtime/types.ts';

/** The line type of a number in a mode: from the cache, else asked of the mode's carrier. */
export type LineTypeOf = (mode: Mode, e164: string, now: Date) => Promise<LineType>;

/**
 * Line types through the mode's carrier (Twilio Lookup live, the number's digits in test mode),
 * cached in PostgreSQL for LINE_TYPE_CACHE_DAYS. A lookup that fails answers `unknown` (which
 * every consent rule reads as mobile, the strictest) and is not cached, so it is asked again.
 */
export function createLineTypeLookup(db: Queryable, carriers: Record<Mode, Carrier>, log: Logger): LineTypeOf {
  const cache = createLineTypeRepository(db);
  return async (mode, e164, now) => {
    const carrier = carriers[mode];
    const cached = await cache.fresh(carrier.name, e164, now);
    if (cached) return cached;
    let lineType: LineType;
    try {
      lineType = await carrier.lookupLineType(e164);
    } catch (err) {
      log.warn({ err, carrier: carrier.name }, 'line type lookup failed; the number is treated as mobile');
      return 'unknown';
    }
    await cache.save(carrier.name, e164, lineType, now);
    return lineType;
  };
}
