import type { Logger } from './logger.ts';
import { isDatabaseOutOfResources, isDatabaseUnreachable } from './database-errors.ts';

/** The longest a loop or the change feed waits between tries while the database is unreachable. */
export const RETRY_CAP_MS = 5_000;

/**
 * The wait before try number `failures + 1` of something that normally runs every `intervalMs`:
 * doubling from `intervalMs` up to RETRY_CAP_MS (a loop slower than the cap keeps its interval).
 */
export function retryDelayMs(intervalMs: number, failures: number): number {
  if (failures <= 0) return intervalMs;
  return Math.min(Math.max(intervalMs, RETRY_CAP_MS), intervalMs * 2 ** (failures - 1));
}

const byLog = new WeakMap<Logger, DatabaseHealth>();

/**
 * Whether this process can reach PostgreSQL, as its poll loops, jobs and change feed find out.
 * When the database goes away every one of them fails at once and again each round; they report
 * here instead of logging, and the process logs one line when the database becomes unreachable
 * and one when it is back (docs/decisions.md, "When PostgreSQL restarts").
 */
export class DatabaseHealth {
  private downSinceMs: number | null = null;
  /**
   * Sources whose work the database refuses for want of resources (SQLSTATE class 53 but 53300: a
   * full disk, no memory), since when. Kept per source: the server still answers, and a reader
   * may succeed while a writer keeps failing, so each has its own streak and its own two lines.
   */
  private readonly refusedSinceMs = new Map<string, number>();

  constructor(private readonly log: Logger) {}

  /**
   * The one health of a process log. Components that are handed only the log (a poll loop) find
   * it here, so every component of a service reports to the same one.
   */
  static of(log: Logger): DatabaseHealth {
    let health = byLog.get(log);
    if (!health) byLog.set(log, (health = new DatabaseHealth(log)));
    return health;
  }

  get reachable(): boolean {
    return this.downSinceMs === null;
  }

  /**
   * Something that needed the database failed with `err`. True when `err` means the database
   * cannot be reached or refuses the work for want of resources (noted, one line per outage or
   * per source's streak; the caller backs off and logs nothing); false for any other
   * error, which the caller handles (and logs) as before.
   */
  failed(err: unknown, source: string): boolean {
    if (!isDatabaseUnreachable(err)) return false;
    const e = err as { code?: string; message?: string };
    if (isDatabaseOutOfResources(err) && e.code !== '53300') {
      if (!this.refusedSinceMs.has(source)) {
        this.refusedSinceMs.set(source, Date.now());
        this.log.error(
          { event: 'database_out_of_resources', source, error: e.message ?? String(err), error_code: e.code },
          `${source}: the database refuses the work for want of resources (SQLSTATE ${e.code}); retrying with backoff until it takes it`,
        );
      }
      return true;
    }
    if (this.downSinceMs === null) {
      this.downSinceMs = Date.now();
      this.log.error(
        { event: 'database_unreachable', source, error: e.message ?? String(err), error_code: e.code },
        'database unreachable; retrying with backoff until it is back',
      );
    }
    return true;
  }

  /** Something reached the database. */
  succeeded(source: string): void {
    const refusedSince = this.refusedSinceMs.get(source);
    if (refusedSince !== undefined) {
      this.refusedSinceMs.delete(source);
      this.log.info({ event: 'database_resources_back', source, down_ms: Date.now() - refusedSince }, `${source}: the database takes the work again`);
    }
    if (this.downSinceMs === null) return;
    const downMs = Date.now() - this.downSinceMs;
    this.downSinceMs = null;
    this.log.info({ event: 'database_reachable', source, down_ms: downMs }, 'database reachable again');
  }
}
