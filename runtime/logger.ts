import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Paths that may carry a secret. pino replaces them wherever they appear, so a stray
 * `log.info({req})` or an error carrying headers can never print a key or token.
 */
const REDACT = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  'secret',
  'token',
  'url',
  '*.secret',
  '*.token',
  '*.url',
  'password',
  '*.password',
];

let lastTimeMs = -1;
let lastTime = '';
/**
 * pino's `isoTime` (`,"time":"2026-11-28T01:02:03.456Z"`), formatted once per millisecond: under
 * load several lines share a millisecond, and each would otherwise build a Date and its string.
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== lastTimeMs) {
    lastTimeMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

/** The one pino logger of a process; every other logger is a child of it. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, service: 'switchboard' },
      redact: { paths: REDACT, censor: '[redacted]' },
      timestamp: isoTime,
    },
    destination,
  );
}

/**
 * Where `switchboard start` writes its log lines. Normally straight to fd 1 through pino's
 * destination, which skips the stream machinery on every line. Not under pm2's
 * cluster mode: there a worker's fd 1 is the pm2 daemon's own stdout (its pm2.log), and pm2 takes
 * an app's output into the app's files only through `process.stdout.write`, which it replaces in
 * each worker; so there the lines go through process.stdout.
 *
 * Lines are gathered up to LOG_WRITE_BYTES and written together, or after at most LOG_FLUSH_MS:
 * under load one write per request line cost more than the line itself (docs/decisions.md).
 */
export function logDestination(env: NodeJS.ProcessEnv = process.env): pino.DestinationStream {
  if (underPm2Cluster(env)) return process.stdout;
  // Written synchronously, as Node writes process.stdout to a pipe or a file: an asynchronous write
  // still in flight when the process exits (a crash, process.exit) is overtaken by pino's
  // synchronous flush of the lines after it, so the last lines came out before earlier ones, or
  // those were lost. Synchronous, the lines are in order and complete when 'exit' flushes the rest.
  const destination = pino.destination({ dest: 1, sync: true, minLength: LOG_WRITE_BYTES });
  // What waits under LOG_WRITE_BYTES goes out within LOG_FLUSH_MS (nothing written while nothing waits).
  setInterval(() => {
    if ((destination as unknown as { _len: number })._len > 0) destination.flush();
  }, LOG_FLUSH_MS).unref();
  // pino flushes only an asynchronous destination at exit by itself: what waits is written then.
  if (flushedAtExit.size === 0) process.on('exit', () => flushedAtExit.forEach((d) => d.flushSync()));
  flushedAtExit.add(destination);
  return destination;
}

/** The destinations whose waiting lines are written when the process exits. */
const flushedAtExit = new Set<{ flushSync(): void }>();

/** Log lines are written once this many bytes are waiting… */
export const LOG_WRITE_BYTES = 4096;
/** …or at most this many ms after they were logged. */
export const LOG_FLUSH_MS = 10;

/** pm2 copies each app's settings into its processes' environment; cluster mode is `cluster_mode`. */
export function underPm2Cluster(env: NodeJS.ProcessEnv): boolean {
  return env.exec_mode === 'cluster_mode';
}
