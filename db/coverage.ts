import type { Queryable } from './pool.ts';

export interface CountryRow {
  country: string;
  name: string;
  calling_language: string;
  default_timezone: string;
  number_route: string;
  numbers_available: number;
  opened: boolean;
  speech_certified: boolean;
}

const SELECT = `SELECT c.*, EXISTS (SELECT 1 FROM speech_certifications s WHERE s.locale = c.calling_language) AS speech_certified
                  FROM countries c`;

export function createCoverageRepository(db: Queryable) {
  return {
    async get(country: string): Promise<CountryRow | null> {
      const { rows } = await db.query(`${SELECT} WHERE c.country = $1`, [country]);
      return rows[0] ?? null;
    },
    async list(): Promise<CountryRow[]> {
      const { rows } = await db.query(`${SELECT} ORDER BY c.country`);
      return rows;
    },
    /** The calling language of a customer's country (the language of its calls' summaries); null for an unknown customer. */
    async callingLanguageOf(customerId: string): Promise<string | null> {
      const { rows } = await db.query(`SELECT co.calling_language FROM customers cu JOIN countries co ON co.country = cu.country WHERE cu.id = $1`, [customerId]);
      return rows[0]?.calling_language ?? null;
    },
    async certifyLanguage(locale: string, now: Date): Promise<void> {
      await db.query(`INSERT INTO speech_certifications (locale, certified_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [locale, now]);
    },
    async certifiedLanguages(): Promise<string[]> {
      const { rows } = await db.query(`SELECT locale FROM speech_certifications ORDER BY locale`);
      return rows.map((r) => r.locale);
    },
  };
}
