import { systemClock, TestClock, type Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import type { Pool } from '../db/pool.ts';
import { createSettingsRepository, TEST_CLOCK_SETTING } from '../db/settings.ts';
import type { TestClockControl } from '../http/routes/deps.ts';

/*
 * A test clock is shared by every process on the database, like a Stripe test clock: its offset
 * is a setting, published on the change feed when it moves (docs/decisions.md, "A shared test
 * clock"). This module is the only one that reads or writes that setting.
 */

/** The process's clock: the system's, or with SWITCHBOARD_TEST_CLOCK=1 the shared test clock at its stored offset. */
export async function openClock(testClock: boolean, pool: Pool): Promise<Clock> {
  if (!testClock) return systemClock;
  return new TestClock(Number((await createSettingsRepository(pool).get(TEST_CLOCK_SETTING)) ?? 0));
}

/** Adopts the stored offset again, after the change feed was away and may have missed a move. */
export function refreshTestClock(clock: Clock, pool: Pool, log: Logger): void {
  if (!(clock instanceof TestClock)) return;
  void createSettingsRepository(pool)
    .get(TEST_CLOCK_SETTING)
    .then((offset) => clock.catchUp(Number(offset ?? 0)))
    .catch((err) => log.warn({ err }, 'test clock not refreshed after the change feed reconnected'));
}

/** What the console's test-clock route moves: this process's clock, then every other's through the setting. Null without a test clock. */
export function testClockControl(clock: Clock, pool: Pool): TestClockControl | null {
  if (!(clock instanceof TestClock)) return null;
  return {
    async advance(ms) {
      const now = clock.advance(ms);
      await createSettingsRepository(pool).publishTestClock(TEST_CLOCK_SETTING, clock.offset);
      return now;
    },
  };
}
