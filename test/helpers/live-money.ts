import crypto from 'node:crypto';
import type { TestAccount } from './factories.ts';

/**
 * Live money moved through the operator's test facilities (SWITCHBOARD_TEST_CLOCK=1): a top-up,
 * a call's hold and its end, and spending a sum in calls. At 20 cents a minute a cent is 3 seconds.
 */

export async function topUp(a: TestAccount, amount_cents: number): Promise<void> {
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents });
  if (r.status !== 201) throw new Error(`top-up: ${r.status} ${r.text}`);
}

/** Starts a live call's money (its hold); throws when it is refused. */
export async function hold(a: TestAccount, customer_id: string, reference: string): Promise<void> {
  const r = await a.admin.post(`/admin/v1/accounts/${a.id}/holds`, { mode: 'live', customer_id, reference });
  if (!r.body.ok) throw new Error(`hold: ${r.status} ${r.text}`);
}

export const end = (a: TestAccount, reference: string, duration_seconds: number) =>
  a.admin.post(`/admin/v1/accounts/${a.id}/holds/${encodeURIComponent(reference)}/end`, { duration_seconds });

/** Spends `cents` in calls of at most one hold (400 cents) each, one after another. */
export async function spend(a: TestAccount, customerId: string, cents: number): Promise<void> {
  for (let left = cents; left > 0; left -= 400) {
    const ref = `spend-${crypto.randomUUID()}`;
    await hold(a, customerId, ref);
    await end(a, ref, Math.min(left, 400) * 3);
  }
}
