import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import { createCustomerRepository, type CustomerRow } from '../../db/customers.ts';
import { pageStart, toList, type List, type Page } from '../shared/list.ts';
import { checkReadinessOfMany } from './readiness-check.ts';
import { customerView } from './views.ts';

/** The customer's own status (prospect, active, paused) or its readiness for its own calls (ready, blocked). */
export const CUSTOMER_LIST_FILTERS = ['ready', 'blocked', 'prospect', 'active', 'paused'] as const;
export type CustomerListFilter = (typeof CUSTOMER_LIST_FILTERS)[number];

/** A customer with its readiness in one word and a number: the console's customer list. */
export type CustomerWithReadiness = ReturnType<typeof customerView> & { ready: boolean; blocker_count: number };

/** Rows read per round while a readiness filter looks for a page's worth of matches. */
const SCAN_BATCH = 200;

/**
 * An account's customers with their readiness, newest first, a page at a time (the console's
 * list). Readiness is assessed fresh, by the same statement and rule as the readiness endpoint, for
 * the customer's own calls (the test question for a test customer, the live one for a live
 * customer): `ready` and `blocker_count` are that answer's. A readiness filter reads the list in
 * rounds until a page is full, so every page is full until the last and the cursor stays the
 * id of the last customer shown.
 */
export function createCustomerList(deps: Pick<Deps, 'pool' | 'clock'>, opts: { scanBatch?: number } = {}) {
  const { pool, clock } = deps;
  const scanBatch = opts.scanBatch ?? SCAN_BATCH;

  return {
    async list(accountId: string, mode: Mode, page: Page, filter: CustomerListFilter | null = null): Promise<List<CustomerWithReadiness>> {
      let before = await pageStart(pool, page, { table: 'customers', accountId, mode });
      const readiness = filter === 'ready' ? true : filter === 'blocked' ? false : null;
      const status = readiness === null ? (filter as CustomerRow['status'] | null) : null;
      const batch = readiness === null ? page.limit + 1 : Math.max(page.limit + 1, scanBatch);
      const repo = createCustomerRepository(pool);
      const found: CustomerWithReadiness[] = [];
      for (;;) {
        const rows = await repo.list(accountId, mode, batch, before, status);
        const assessed = await checkReadinessOfMany(pool, rows.map((r) => r.id), clock.now());
        for (const row of rows) {
          const answer = assessed.get(row.id)?.assessment;
          if (!answer || (readiness !== null && answer.ready !== readiness)) continue;
          found.push({ ...customerView(row), ready: answer.ready, blocker_count: answer.blockers.length });
          if (found.length > page.limit) break;
        }
        if (found.length > page.limit || rows.length < batch) break;
        before = rows.at(-1)!.seq;
      }
      return toList(found, page.limit, (c) => c);
    },
  };
}

export type CustomerList = ReturnType<typeof createCustomerList>;
