import { withTransaction, type Pool } from '../../db/pool.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { refreshReadiness } from '../customer/readiness-check.ts';
import { assessCoverage, type Coverage } from './coverage.ts';

/**
 * Coverage is platform-wide (not an entity with a single writer): reads go to PostgreSQL and the
 * one write, certifying a calling language, re-assesses every customer that calls in it.
 */
export async function coverageOf(pool: Pool, country: string): Promise<Coverage> {
  const code = country.toUpperCase();
  return assessCoverage(code, await createCoverageRepository(pool).get(code));
}

export async function allCoverage(pool: Pool): Promise<Coverage[]> {
  const rows = await createCoverageRepository(pool).list();
  return rows.filter((r) => r.opened).map((r) => assessCoverage(r.country, r));
}

/** Opens the human speech gate for `locale`; customers that become ready emit customer.ready. */
export async function certifyLanguage(pool: Pool, locale: string, now: Date): Promise<{ object: 'speech_certification'; locale: string; certified: true }> {
  await withTransaction(pool, async (client) => {
    await createCoverageRepository(client).certifyLanguage(locale, now);
    await refreshReadiness(client, { locale }, now);
  });
  return { object: 'speech_certification', locale, certified: true };
}
