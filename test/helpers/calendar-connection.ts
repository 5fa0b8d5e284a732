import type { Pool } from 'pg';
import { createCalendarConnectionRepository } from '../../db/calendar-connections.ts';
import type { CalendarCredentials } from '../../calendars/calendar.ts';
import { SecretBox } from '../../runtime/secret-box.ts';
import { TEST_ENCRYPTION_KEY } from './service.ts';

/**
 * A working calendar connection for `customer`, inserted straight into the repository with its
 * credentials sealed by the test service's secret box (the connect flow is tested on its own):
 * the simulated calendar named by the customer's id unless other credentials are given.
 */
export async function insertCalendarConnection(
  pool: Pool,
  customer: { id: string; mode: 'test' | 'live' },
  opts: { credentials?: CalendarCredentials; label?: string; syncToken?: string | null; now?: Date } = {},
) {
  const { rows } = await pool.query(`SELECT account_id FROM customers WHERE id = $1`, [customer.id]);
  const credentials = opts.credentials ?? { kind: 'simulated', calendarId: customer.id };
  const now = opts.now ?? new Date();
  return createCalendarConnectionRepository(pool).upsert({
    customer_id: customer.id,
    account_id: rows[0].account_id,
    mode: customer.mode,
    kind: credentials.kind,
    credentials: SecretBox.fromKey(TEST_ENCRYPTION_KEY).seal(JSON.stringify(credentials)),
    label: opts.label ?? 'Test calendar',
    sync_token: opts.syncToken ?? null,
    now,
    checkDueAt: new Date(now.getTime() + 6 * 3_600_000),
  });
}
