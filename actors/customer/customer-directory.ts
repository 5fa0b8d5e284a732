import type { Queryable } from '../../db/pool.ts';
import type { Mode } from '../../runtime/types.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { Refusal } from '../../runtime/refusal.ts';

/** What the directory knows of a customer: facts that never change once it exists. */
export interface KnownCustomer {
  id: string;
  /** The country it calls in; national numbers are read in it. */
  country: string;
}

/** Positive answers kept per process; past this many the oldest are forgotten first. */
const MAX_CACHED = 100_000;

/**
 * Which customer an `{id}` names in an account and mode: the service id, or the external_ref the
 * reseller gave it. The one place an external_ref is resolved, for every route and service.
 *
 * Answers are cached in the process with no invalidation, because what they say never changes:
 * a customer never moves to another account or mode, is never deleted, and its external_ref and
 * country are set once at creation. A miss is not cached (the customer may be created next).
 */
export function createCustomerDirectory(pool: Queryable) {
  const known = new Map<string, KnownCustomer>();

  return {
    /** The customer `idOrRef` names; `customer_not_found` when the account has none by that name in `mode`. */
    async find(accountId: string, mode: Mode, idOrRef: string): Promise<KnownCustomer> {
      const key = `${accountId}:${mode}:${idOrRef}`;
      const cached = known.get(key);
      if (cached) return cached;
      const row = await createCustomerRepository(pool).findByIdOrRef(accountId, mode, idOrRef);
      if (!row) throw new Refusal('customer_not_found', `No customer "${idOrRef}" in ${mode} mode.`);
      if (known.size >= MAX_CACHED) known.delete(known.keys().next().value!);
      const customer = { id: row.id, country: row.country };
      known.set(key, customer);
      return customer;
    },
  };
}

export type CustomerDirectory = ReturnType<typeof createCustomerDirectory>;
