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

    /**
     * A number the operator bought by hand (console assign-number): working at once; its first
     * month is settled by hand, so its rent renews from a month after the assignment.
     */
    async assignNumber(n: {
      accountId: string;
      mode: Mode;
      customerId: string;
      e164: string;
      country: string;
      kind: 'rented' | 'caller_id';
      monthlyCents: number;
      anchorDay: number;
      renewsOn: string;
      now: Date;
    }) {
      const { rows } = await db.query(
        `INSERT INTO phone_numbers (account_id, mode, customer_id, e164, country, kind, monthly_cents, anchor_day, renews_on, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING *`,
        [n.accountId, n.mode, n.customerId, n.e164, n.country, n.kind, n.monthlyCents, n.anchorDay, n.renewsOn, n.now],
      );
      return rows[0] as { id: string; e164: string; country: string; kind: string; created_at: Date };
    },
  };
}
