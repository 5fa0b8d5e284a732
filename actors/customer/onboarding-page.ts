import type { Deps } from '../../runtime/deps.ts';
import { createOnboardingLinkRepository, type OnboardingLinkRow } from '../../db/onboarding-links.ts';
import { createCustomerRepository, type CustomerRow } from '../../db/customers.ts';
import { createAccountRepository, type AccountRow } from '../../db/accounts.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { hashToken, isWellFormed } from '../../runtime/tokens.ts';
import { ONBOARDING_TOKEN_PREFIX } from './customer-actor.ts';

export type LinkState = 'active' | 'completed' | 'replaced' | 'expired';

export interface OpenedLink {
  link: OnboardingLinkRow;
  state: LinkState;
  customer: CustomerRow;
  account: AccountRow;
  /** The customer's calling language (its country's, e.g. `fr-FR`): the page is written in it. */
  locale: string | null;
}

/**
 * The links behind onboarding URLs, read for the page a customer opens (the customer actor
 * writes them; the page only reads, then asks the actor to complete).
 */
export function createOnboardingPage({ pool, clock }: Pick<Deps, 'pool' | 'clock'>) {
  return {
    /** The link a token in an onboarding URL names, with what its page shows; null for any bad token. */
    async open(token: string): Promise<OpenedLink | null> {
      const now = clock.now();
      if (!isWellFormed(token, ONBOARDING_TOKEN_PREFIX)) return null;
      const link = await createOnboardingLinkRepository(pool).findByTokenHash(hashToken(token));
      if (!link) return null;
      const [customer, account] = await Promise.all([
        createCustomerRepository(pool).get(link.customer_id),
        createAccountRepository(pool).get(link.account_id),
      ]);
      if (!customer || !account) return null;
      const country = await createCoverageRepository(pool).get(customer.country);
      const state: LinkState = link.status === 'active' && link.expires_at <= now ? 'expired' : link.status;
      return { link, state, customer, account, locale: country?.calling_language ?? null };
    },
  };
}

export type OnboardingPage = ReturnType<typeof createOnboardingPage>;
