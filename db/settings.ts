import type { Queryable } from './pool.ts';

export function createSettingsRepository(db: Queryable) {
  return {
    async get(key: string): Promise<string | null> {
      const { rows } = await db.query(`SELECT value FROM settings WHERE key = $1`, [key]);
      return rows[0]?.value ?? null;
    },
    async set(key: string, value: string): Promise<void> {
      await db.query(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [key, value]);
    },
  };
}
