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

/** The one pino logger of a process; every other logger is a child of it. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, service: 'switchboard' },
      redact: { paths: REDACT, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
