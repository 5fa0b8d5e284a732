import type { Queryable } from '../../db/pool.ts';
import { createAccountRepository } from '../../db/accounts.ts';

/**
 * Where a reseller's customers are sent (pure): `https://<brand domain>` once DNS has verified
 * the domain points at the service, the service's public URL before (and whenever it stops
 * pointing). Every URL handed out for a customer-facing page (an onboarding link, a chat page, a website preview)
 * starts with this, so a reseller's customers never see the platform's host.
 */
export function customerOrigin(account: { domain: string | null; domain_status: string }, publicUrl: string): string {
  return account.domain && account.domain_status === 'verified' ? `https://${account.domain}` : publicUrl;
}

/** `customerOrigin` of account `accountId`, read in `db` (the public URL if there is no such account). */
export async function customerOriginOf(db: Queryable, accountId: string, publicUrl: string): Promise<string> {
  const account = await createAccountRepository(db).get(accountId);
  return account ? customerOrigin(account, publicUrl) : publicUrl;
}
