import type { Queryable } from './pool.ts';
import type { Mode } from '../runtime/types.ts';

export function createProvisioningRepository(db: Queryable) {
  return {
    async recordRequest(r: { accountId: string; customerId: string; steps: string[]; now: Date }): Promise<void> {
      await db.query(`INSERT INTO provisioning_requests (account_id, customer_id, steps, created_at) VALUES ($1, $2, $3, $4)`, [
        r.accountId,
        r.customerId,
        r.steps,
        r.now,
      ]);
    },

    async hasActiveNumber(customerId: string, country: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `SELECT 1 FROM phone_numbers WHERE customer_id = $1 AND country = $2 AND status = 'active'`,
        [customerId, country],
      );
      return (rowCount ?? 0) > 0;
    },

    async assignNumber(n: { accountId: string; mode: Mode; customerId: string; e164: string; country: string; kind: 'rented' | 'caller_id'; now: Date }) {
      const { rows } = await db.query(
        `INSERT INTO phone_numbers (account_id, mode, customer_id, e164, country, kind, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [n.accountId, n.mode, n.customerId, n.e164, n.country, n.kind, n.now],
      );
      return rows[0] as { id: string; e164: string; country: string; kind: string; created_at: Date };
    },
  };
}
