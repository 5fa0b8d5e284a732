import type { Pool } from '../../db/pool.ts';
import { createEventRepository } from '../../db/events.ts';
import { eventView } from './views.ts';

/**
 * An account's events for operators, every mode and type at once (the reseller's own list,
 * GET /v1/events, asks the account's webhooks actor and pages by mode).
 */
export function createEventHistory(pool: Pool) {
  return {
    async listForAccount(accountId: string, type?: string) {
      const rows = await createEventRepository(pool).listForAccount(accountId, type);
      return rows.map(eventView);
    },
  };
}

export type EventHistory = ReturnType<typeof createEventHistory>;
