import type { Logger } from './logger.ts';

/**
 * Runs `round` every `intervalMs`, one round at a time (the next is scheduled when the last one
 * ends); a failed round is logged and the loop goes on. Returns a stop function.
 */
export function pollLoop(round: () => Promise<unknown>, intervalMs: number, log: Logger, what: string): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(async () => {
      await round().catch((err) => log.error({ err }, `${what} round failed; the next round retries`));
      schedule();
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
