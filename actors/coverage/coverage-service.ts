import { withTransaction } from '../../db/pool.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import type { Deps } from '../../runtime/deps.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import { assessCoverage, type Coverage } from './coverage.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { staleRegistriesOf } from '../shared/dnc-registries.ts';

/**
 * Coverage is platform-wide (not an entity with a single writer): reads go to PostgreSQL and the
 * one write, certifying a calling language, re-assesses every customer that calls in it. The
 * composition root (app/) builds this once and hands it to the routes that show coverage.
 */
export function createCoverageService({ pool, clock }: Pick<Deps, 'pool' | 'clock'>) {
  const staleOf = async (country: string) => staleRegistriesOf(country, await createDncRepository(pool).registryImports(country), clock.now());
  return {
    async of(country: string): Promise<Coverage> {
      const code = country.toUpperCase();
      return assessCoverage(code, await createCoverageRepository(pool).get(code), await staleOf(code));
    },

    /** Every opened country. */
    async all(): Promise<Coverage[]> {
      const rows = await createCoverageRepository(pool).list();
      const imports = await createDncRepository(pool).registryImports();
      return rows.filter((r) => r.opened).map((r) => assessCoverage(r.country, r, staleRegistriesOf(r.country, imports, clock.now())));
    },

    /** Opens the human speech gate for `locale`; customers that become ready emit customer.ready. */
    async certifyLanguage(locale: string): Promise<{ object: 'speech_certification'; locale: string; certified: true }> {
      const now = clock.now();
      await withTransaction(pool, async (client) => {
        await createCoverageRepository(client).certifyLanguage(locale, now);
        await refreshReadiness(client, { locale }, now);
      });
      return { object: 'speech_certification', locale, certified: true };
    },
  };
}

export type CoverageService = ReturnType<typeof createCoverageService>;
