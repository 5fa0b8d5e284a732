/** Where a test clock's position (ms ahead of real time) is kept. */
export const TEST_CLOCK_SETTING = 'test_clock_offset_ms';
/**
 * The carrier live mode uses (`twilio`, `simulated` or `none`), written by each process at
 * start-up from its configuration, so readiness and the call path read it with their facts.
 */
export const LIVE_CARRIER_SETTING = 'live_carrier';

import type { Queryable } from './pool.ts';

export function createSettingsRepository(db: Queryable) {
  return {
    async get(key: string): Promise<string | null> {
      const { rows } = await db.query(`SELECT value FROM settings WHERE key = $1`, [key]);
      return rows[0]?.value ?? null;
    },
    /** Stores a test clock's position and tells the other processes (they catch up on the notification). */
    async publishTestClock(key: string, offsetMs: number): Promise<void> {
      await db.query(
        `WITH s AS (INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value)
         SELECT pg_notify('switchboard_changes', 'clock:' || $2)`,
        [key, String(offsetMs)],
      );
    },
    /** Sets `key` to `value` unless it already holds a later one (values compare as text: ISO dates). */
    async raise(key: string, value: string): Promise<void> {
      await db.query(
        `INSERT INTO settings AS s (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = GREATEST(s.value, EXCLUDED.value)`,
        [key, value],
      );
    },
    async set(key: string, value: string): Promise<void> {
      await db.query(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [key, value]);
    },
  };
}
