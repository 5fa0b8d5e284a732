import type { DncRow } from '../../db/dnc.ts';
import { iso } from '../../runtime/types.ts';

/** A number of the account's do-not-call list, with where it came from. */
export function dncView(d: DncRow) {
  return {
    object: 'dnc_entry' as const,
    phone: d.e164,
    source: d.source,
    reason: d.reason,
    call_id: d.call_id,
    created_at: iso(d.created_at),
  };
}
