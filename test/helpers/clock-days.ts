import type { Client } from './http.ts';
import { addDays } from '../../money/rules/renewal.ts';

/**
 * The shared test clock by calendar day, for tests of renewals and countdowns: they place each
 * step at noon UTC of a day worked out from the item's own dates, so no step sees its day change
 * under it. `con` is the console client of the service.
 */
export function clockDays(con: Client) {
  /** The test clock's now. */
  async function clockNow(): Promise<Date> {
    return new Date((await con.post('/admin/v1/test_clock/advance', { seconds: 0 })).body.now);
  }

  /** Moves the clock to noon UTC of `day` (YYYY-MM-DD), which must still be ahead. */
  async function advanceTo(day: string): Promise<void> {
    const target = Date.parse(`${day}T12:00:00Z`);
    const now = (await clockNow()).getTime();
    if (target <= now) throw new Error(`the clock is past ${day} already`);
    const r = await con.post('/admin/v1/test_clock/advance', { seconds: Math.ceil((target - now) / 1000) });
    if (r.body.now.slice(0, 10) !== day) throw new Error(`the clock moved to ${r.body.now}, not ${day}`);
  }

  /** Noon of the clock's next day (returned): an item made then cannot see its day change under it. */
  async function startOfTest(): Promise<string> {
    const day = addDays((await clockNow()).toISOString().slice(0, 10), 1);
    await advanceTo(day);
    return day;
  }

  return { clockNow, advanceTo, startOfTest };
}
