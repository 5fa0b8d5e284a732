import type { Logger } from './logger.ts';
import { pollLoop } from './poll-loop.ts';
import { DatabaseHealth } from './database-health.ts';

/**
 * A poll loop that can also be woken (the webhook and email senders: a new row wakes them through
 * the change feed). `poke` runs a round at once; pokes in one turn of the event loop share one
 * round. A loop never started ignores pokes: a process without the role hears of new rows too,
 * and leaves them to the processes that have it.
 */
export class WakeableLoop {
  private stopLoop: (() => Promise<void>) | undefined;
  private stopping = false;
  private poked = false;
  private readonly health: DatabaseHealth;

  constructor(
    private readonly round: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly log: Logger,
    /** Names the loop in its log lines: `webhook sender`. */
    private readonly what: string,
  ) {
    this.health = DatabaseHealth.of(log);
  }

  /** True once `stop` was called. */
  get stopped(): boolean {
    return this.stopping;
  }

  start(): void {
    this.stopLoop = pollLoop(this.round, this.intervalMs, this.log, this.what, this.health);
  }

  poke(): void {
    if (!this.stopLoop || this.stopping || this.poked) return;
    this.poked = true;
    setImmediate(() => {
      this.poked = false;
      void this.round().catch((err) => {
        if (!this.health.failed(err, this.what)) this.log.error({ err }, `${this.what} round failed; next round retries`);
      });
    });
  }

  /** Stops the schedule; resolves when the scheduled round in progress, if any, has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.stopLoop?.();
  }
}
