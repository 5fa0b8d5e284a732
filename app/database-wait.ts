import type { Pool } from '../db/pool.ts';
import { probeDatabase } from '../db/health.ts';
import { isDatabaseUnreachable } from '../runtime/database-errors.ts';
import type { Logger } from '../runtime/logger.ts';

/** The first wait before trying the database again at start, ms; it doubles up to START_RETRY_CAP_MS. */
export const START_RETRY_FIRST_MS = 1_000;
/** The longest wait between two tries at start, ms. */
export const START_RETRY_CAP_MS = 30_000;

/** The wait after failed try number `attempt` (1-based): 1 s, 2 s, 4 s, … up to 30 s. */
export function startRetryDelayMs(attempt: number): number {
  return Math.min(START_RETRY_CAP_MS, START_RETRY_FIRST_MS * 2 ** Math.max(0, attempt - 1));
}

/**
 * Start-up stopped on something the operator must change (the database's settings, a pooler's):
 * `start` logs it as one JSON line, with `fields`, and exits 2, as for a bad setting.
 */
export class StartRefused extends Error {
  override name = 'StartRefused';
  constructor(
    message: string,
    readonly fields: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Start-up was given up on while it waited for the database (the process was signalled). */
export class StartAborted extends Error {
  override name = 'StartAborted';
}

/**
 * Waits until the database answers before a process starts on it: a role started while PostgreSQL
 * is down (a machine booting, a failover) waits and tries again with backoff, one JSON line per
 * failed try saying when the next one is, instead of exiting into a supervisor's tight restart
 * loop. Errors that are not "cannot be reached right now" (a wrong password, a database that does
 * not exist) are thrown at once: waiting would not mend them. `signal` gives up (StartAborted).
 */
export async function waitForDatabase(pool: Pool, log: Logger, opts: { signal?: AbortSignal } = {}): Promise<void> {
  const startedAt = Date.now();
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw new StartAborted('start-up stopped while waiting for the database');
    try {
      await probeDatabase(pool);
      if (attempt > 1) log.info({ event: 'database_wait_over', attempts: attempt, waited_ms: Date.now() - startedAt }, 'the database answers; starting');
      return;
    } catch (err) {
      refusedStartupOption(err);
      if (!isDatabaseUnreachable(err) && !/Query read timeout/.test(String((err as Error)?.message))) throw err;
      const delay = startRetryDelayMs(attempt);
      const e = err as { code?: string; message?: string };
      log.warn(
        { event: 'database_wait', attempt, error_code: e.code, error: e.message ?? String(err), retry_in_ms: delay },
        `the database cannot be reached at start; trying again in ${delay / 1000} s`,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay);
        function done() {
          clearTimeout(timer);
          opts.signal?.removeEventListener('abort', done);
          resolve();
        }
        opts.signal?.addEventListener('abort', done, { once: true });
      });
    }
  }
}

/**
 * PgBouncer before 1.20 refuses the pools' startup `options` (`-c TimeZone=UTC`) with SQLSTATE
 * 08P01, which would otherwise read as a database that is down and be waited for forever.
 */
function refusedStartupOption(err: unknown): void {
  const message = String((err as Error)?.message ?? '');
  if (!/unsupported startup parameter/i.test(message)) return;
  throw new StartRefused(
    `DATABASE_URL leads to a pooler that refuses the startup options the pools send (${message}): behind PgBouncer in transaction mode set SWITCHBOARD_DATABASE_POOLER=transaction and SWITCHBOARD_DIRECT_DATABASE_URL at PostgreSQL itself (docs/decisions.md, "PgBouncer in transaction mode")`,
    { event: 'database_startup_option_refused', error_code: (err as { code?: string }).code },
  );
}
