import { withTransaction, type Pool } from '../../db/pool.ts';
import { createCallRepository } from '../../db/calls.ts';
import { recordEvent } from '../../db/events.ts';
import { holdReads } from '../../db/money/holds.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { callView } from './views.ts';
import { summaryWords } from './summary-words.ts';
import { createCoverageRepository } from '../../db/coverage.ts';

/** What the jobs that may settle a call's money need: the database and the money writer. */
export interface CallJobDeps {
  pool: Pool;
  money: MoneyWriter;
}

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
 * Calls whose process died long ago and that nothing recovered (see call-keeper.ts for the
 * recovery within a minute): each is closed as `failed` with nothing charged beyond its hold's
 * fate, once. A call with a carrier report still waiting in the inbox is left alone.
 */
export async function finishStaleCalls(ctx: CallJobDeps, now: Date, publicUrl: string): Promise<number> {
  const { pool } = ctx;
  const stale = await createCallRepository(pool).staleRunning(new Date(now.getTime() - STALE_CALL_MS), 100);
  let finished = 0;
  for (const candidate of stale) if (await finishLostCall(ctx, candidate.id, now, publicUrl)) finished++;
  return finished;
}

/**
 * Ends a running call whose outcome can no longer be learned (its process is gone and the carrier
 * does not know it): `failed`, 0 seconds, its hold settled at zero, `call.completed`. Once: the
 * row is locked and re-checked. False if the call had ended meanwhile.
 */
export async function finishLostCall(ctx: CallJobDeps, callId: string, now: Date, publicUrl: string, settleUndialled = false): Promise<boolean> {
  return withTransaction(ctx.pool, async (client) => {
    const calls = createCallRepository(client);
    const call = await calls.lock(callId);
    if (!call || !['dialing', 'ringing', 'in_progress'].includes(call.status)) return false;
    const held = call.dialed_at || (settleUndialled && (await holdReads(client).findHold(call.account_id, call.id)));
    if (held) await ctx.money.settleCall(client, { accountId: call.account_id, reference: call.id, durationSeconds: 0, now });
    const row = await calls.update(call.id, {
      status: 'completed',
      outcome: 'failed',
      summary: summaryWords(await createCoverageRepository(client).callingLanguageOf(call.customer_id)).lost,
      duration_seconds: 0,
      ended_at: now,
      updated_at: now,
      lease_expires_at: null,
    });
    await recordEvent(client, { accountId: row.account_id, mode: row.mode, type: 'call.completed', data: callView(row, publicUrl), now });
    return true;
  });
}

/**
 * A request claimed by a process that died before it dialled. Before it took a hold it was still
 * passing the gates: it goes back to the queue, due now (`platform_at_capacity`, the spec's word for
 * "nothing lost; the call starts on a later attempt"). With a hold, the process was dialling and
 * the carrier may have placed the call without our learning its id: the request is closed as
 * lost (nothing charged) rather than risk calling the business twice. False if it had moved on.
 */
export async function recoverUndialled(
  ctx: CallJobDeps,
  callId: string,
  now: Date,
  publicUrl: string,
  retry: { at: Date; reason: string } = { at: now, reason: 'platform_at_capacity' },
): Promise<'requeued' | 'lost' | false> {
  const requeued = await withTransaction(ctx.pool, async (client) => {
    const calls = createCallRepository(client);
    const call = await calls.lock(callId);
    if (!call || call.status !== 'dialing' || call.dialed_at) return false;
    if (await holdReads(client).findHold(call.account_id, call.id)) return null;
    await calls.requeue(call.id, retry.at < call.dial_before ? retry.at : call.dial_before, retry.reason, now);
    return true;
  });
  if (requeued !== null) return requeued && 'requeued';
  return (await finishLostCall(ctx, callId, now, publicUrl, true)) && 'lost';
}

/** Finished calls whose recording did not come in time: their `call.completed` goes out without it. */
export async function emitOverdueCompletions(pool: Pool, now: Date, publicUrl: string): Promise<number> {
  return withTransaction(pool, async (client) => {
    const rows = await createCallRepository(client).takeOverdueCompletions(50);
    for (const row of rows) {
      await recordEvent(client, { accountId: row.account_id, mode: row.mode, type: 'call.completed', data: callView(row, publicUrl), now });
    }
    return rows.length;
  });
}
