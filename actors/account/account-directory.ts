import type { Pool } from '../../db/pool.ts';
import { createAccountRepository } from '../../db/accounts.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { adminAccountView } from './views.ts';

/** Every account, for operators (a read across entities, so no single actor owns it). */
export function createAccountDirectory(pool: Pool) {
  return {
    async list(page: Page) {
      const before = await pageStart(pool, page, { table: 'accounts' });
      const repo = createAccountRepository(pool);
      const rows = await repo.list(page.limit + 1, before);
      const history = await repo.agreementHistory(rows.slice(0, page.limit).map((r) => r.id));
      return toList(rows, page.limit, (r) => adminAccountView(r, history.get(r.id)!));
    },
  };
}

export type AccountDirectory = ReturnType<typeof createAccountDirectory>;
