import type { Pool } from '../../db/pool.ts';
import type { Logger } from '../../runtime/logger.ts';
import { createCallRepository } from '../../db/calls.ts';

/** How often the drain looks whether this process still holds running calls. */
const DRAIN_POLL_MS = 100;

export interface DrainResult {
  /** Running calls this process held when the drain began. */
  running: number;
  /** Of those, how many ended while it waited. */
  finished: number;
  /** Ids of the calls handed over by lease when the drain time ran out. */
  handedOver: string[];
  waitedMs: number;
}

/**
 * A dialler's end on SIGINT/SIGTERM (a rolling upgrade or a stop): it claims nothing more, lets the
 * calls it runs finish for up to `drainMs` (its call keeper keeps their leases and the carrier's
 * reports flowing meanwhile), then stops the keeper and hands the calls still running over by
 * lease: their lease is released at once and marked, so another dialler's keeper takes them
 * without the orphans' wait and without ending them (call-keeper.ts `takeOverHandedOver`). One log
 * line per call handed over, one for the drain's result. Never throws: a drain that cannot reach
 * the database leaves the calls' leases to run out, and they are taken over as orphans.
 */
export async function drainCalls(
  deps: { pool: Pool; log: Logger; owner: string; dialler: { stop(): Promise<void> }; keeper: { stop(): Promise<void> } },
  drainMs: number,
): Promise<DrainResult> {
  const { pool, log, owner } = deps;
  const calls = createCallRepository(pool);
  const t0 = Date.now();
  await deps.dialler.stop();
  const result: DrainResult = { running: 0, finished: 0, handedOver: [], waitedMs: 0 };
  try {
    let left = (await calls.runningOf(owner)).length;
    result.running = left;
    if (left > 0) log.info({ owner, running: left, drain_ms: drainMs }, 'the dialler is draining: it claims no new call and lets its running calls finish');
    while (left > 0 && Date.now() - t0 < drainMs) {
      await new Promise((r) => setTimeout(r, Math.min(DRAIN_POLL_MS, Math.max(0, drainMs - (Date.now() - t0)))));
      left = await calls.runningOf(owner).then(
        (rows) => rows.length,
        () => left, // the database away for a moment: keep waiting
      );
    }
    // The keeper would renew the leases about to be handed over.
    await deps.keeper.stop();
    const handed = await calls.handOver(owner);
    for (const call of handed) {
      log.warn({ call_id: call.id, status: call.status, owner, drain_ms: drainMs }, 'a running call is handed over by lease to another dialler; the call goes on');
    }
    result.handedOver = handed.map((c) => c.id);
    result.finished = Math.max(0, result.running - handed.length);
  } catch (err) {
    log.error({ err, owner }, 'the drain could not hand its calls over; their leases run out and another dialler takes them over as orphans');
  }
  result.waitedMs = Date.now() - t0;
  log.info(
    { owner, running: result.running, finished: result.finished, handed_over: result.handedOver.length, waited_ms: result.waitedMs, drain_ms: drainMs },
    result.handedOver.length ? 'dialler drained: calls still running were handed over' : 'dialler drained: every call finished',
  );
  return result;
}
