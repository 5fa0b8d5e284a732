import { withTransaction, type Pool } from '../../db/pool.ts';
import { createCallRepository } from '../../db/calls.ts';
import { recordEvent } from '../../db/events.ts';
import { settleCall } from '../account/call-money.ts';
import { callView } from './views.ts';

/** A call still running this long after its claim was lost with its process (limit 20 min + ringing). */
export const STALE_CALL_MS = 35 * 60 * 1000;

/** Requests not dialled before their deadline become `expired` and say so (call.completed). */
export async function expireRequests(pool: Pool, now: Date, publicUrl: string): Promise<number> {
  return withTransaction(pool, async (client) => {
    const rows = await createCallRepository(client).expireOverdue(now);
    for (const row of rows) {
      await recordEvent(client, { accountId: row.account_id, mode: row.mode, type: 'call.completed', data: callView(row, publicUrl), now });
    }
    return rows.length;
  });
}

/**
 * Calls whose process died: they never get a final report in this process's memory. Each is
 * closed as `failed` with nothing charged beyond its hold's fate (settled at zero if still open),
 * once: the row is locked and re-checked.
 */
export async function finishStaleCalls(pool: Pool, now: Date, publicUrl: string): Promise<number> {
  const stale = await createCallRepository(pool).staleRunning(new Date(now.getTime() - STALE_CALL_MS), 100);
  let finished = 0;
  for (const candidate of stale) {
    const done = await withTransaction(pool, async (client) => {
      const calls = createCallRepository(client);
      const call = await calls.lock(candidate.id);
      if (!call || !['dialing', 'ringing', 'in_progress'].includes(call.status)) return false;
      if (call.dialed_at) await settleCall(client, { accountId: call.account_id, reference: call.id, durationSeconds: 0, now });
      const row = await calls.update(call.id, {
        status: 'completed',
        outcome: 'failed',
        summary: 'The call was lost before it reported an outcome; nothing was charged for it.',
        duration_seconds: 0,
        ended_at: now,
        updated_at: now,
      });
      await recordEvent(client, { accountId: row.account_id, mode: row.mode, type: 'call.completed', data: callView(row, publicUrl), now });
      return true;
    });
    if (done) finished++;
  }
  return finished;
}
