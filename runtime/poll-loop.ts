import type { Logger } from './logger.ts';
import { DatabaseHealth, retryDelayMs } from './database-health.ts';

/**
 * Runs `round` every `intervalMs`, one round at a time (the next is scheduled when the last one
 * ends). A round that fails because the database cannot be reached is reported to the process's
 * DatabaseHealth (one log line for the whole outage) and the loop backs off, doubling its wait up
 * to RETRY_CAP_MS; any other failure is logged and the loop goes on. Returns a stop function that
 * resolves when the round in progress, if any, has ended.
 *
 * The timers are unref'd: a loop never keeps a process alive on its own (the `start` command
 * does, until it is signalled: app/cli.ts).
 */
export function pollLoop(
  round: () => Promise<unknown>,
  intervalMs: number,
  log: Logger,
  what: string,
  health: DatabaseHealth = DatabaseHealth.of(log),
): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let failures = 0;
  const once = async () => {
    try {
      await round();
      failures = 0;
      health.succeeded(what);
    } catch (err) {
      if (health.failed(err, what)) failures++;
      else {
        failures = 0;
        log.error({ err }, `${what} round failed; the next round retries`);
      }
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = once().finally(() => {
        running = undefined;
        schedule();
      });
    }, retryDelayMs(intervalMs, failures));
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
