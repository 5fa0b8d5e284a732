import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

/**
 * Every list that pages by `starting_after`, with the rows it shows. A cursor names a row only
 * inside those rows: one of another account, another customer or the other mode is no cursor at
 * all (400 invalid_cursor), so a test key cannot learn whether a live id exists. The scope is
 * part of the type, so a new list cannot forget its mode.
 */
export type CursorScope =
  | { table: 'customers' | 'calls' | 'appointments' | 'ledger_entries' | 'events' | 'activity_log' | 'card_payments'; accountId: string; mode: Mode }
  | { table: 'onboarding_links' | 'chat_sessions' | 'phone_numbers' | 'website_builds'; customerId: string }
  /** The do-not-call list is one list for both modes (compliance is never relaxed in test mode). */
  | { table: 'dnc_numbers'; accountId: string }
  /** An endpoint's deliveries (the console's delivery log). */
  | { table: 'webhook_deliveries'; endpointId: string }
  /** Test clocks are test mode only: one list per account. */
  | { table: 'test_clocks'; accountId: string }
  | { table: 'accounts' };

/** The column a cursor is matched on, and whether it is a uuid (anything else cannot name a row). */
const KEY: Record<CursorScope['table'], { column: string; uuid: boolean }> = {
  customers: { column: 'id', uuid: true },
  calls: { column: 'id', uuid: true },
  appointments: { column: 'id', uuid: true },
  ledger_entries: { column: 'id', uuid: true },
  activity_log: { column: 'id', uuid: true },
  card_payments: { column: 'id', uuid: true },
  onboarding_links: { column: 'id', uuid: true },
  chat_sessions: { column: 'id', uuid: true },
  phone_numbers: { column: 'id', uuid: true },
  website_builds: { column: 'id', uuid: true },
  accounts: { column: 'id', uuid: true },
  events: { column: 'id', uuid: false },
  dnc_numbers: { column: 'e164', uuid: false },
  webhook_deliveries: { column: 'id', uuid: true },
  test_clocks: { column: 'id', uuid: true },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The scope's own conditions, as SQL over $2, $3… and their values. */
function scopeFilter(scope: CursorScope): { sql: string; values: string[] } {
  switch (scope.table) {
    case 'customers':
    case 'calls':
    case 'appointments':
    case 'ledger_entries':
    case 'activity_log':
    case 'card_payments':
    case 'events':
      return { sql: 'account_id = $2 AND mode = $3', values: [scope.accountId, scope.mode] };
    case 'onboarding_links':
    case 'chat_sessions':
    case 'phone_numbers':
    case 'website_builds':
      return { sql: 'customer_id = $2', values: [scope.customerId] };
    case 'dnc_numbers':
    case 'test_clocks':
      return { sql: 'account_id = $2', values: [scope.accountId] };
    case 'webhook_deliveries':
      return { sql: 'endpoint_id = $2', values: [scope.endpointId] };
    case 'accounts':
      return { sql: 'TRUE', values: [] };
    default: {
      const never: never = scope;
      throw new Error(`no cursor scope for ${JSON.stringify(never)}`);
    }
  }
}

/**
 * The position (`seq`) of the row a `starting_after` cursor names within the list `scope`
 * describes, or null when that list has no such row.
 */
export async function cursorSeq(db: Queryable, scope: CursorScope, cursor: string): Promise<number | null> {
  const key = KEY[scope.table];
  if (key.uuid && !UUID.test(cursor)) return null;
  const filter = scopeFilter(scope);
  const { rows } = await db.query(`SELECT seq FROM ${scope.table} WHERE ${key.column} = $1 AND ${filter.sql}`, [cursor, ...filter.values]);
  return rows[0]?.seq ?? null;
}
