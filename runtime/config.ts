import path from 'node:path';

/** Every setting the service reads from its environment, resolved once at start-up. */
export interface Config {
  /** TCP port of the HTTP server; 0 picks a free one. */
  port: number;
  /** Interface the HTTP server binds to. */
  host: string;
  /** Origin of every URL the service hands out (onboarding links, media streams). No trailing slash. */
  publicUrl: string;
  /** PostgreSQL connection string; when absent an embedded server is started under `dataDir`. */
  databaseUrl: string | undefined;
  /** Where the embedded database and other local state live. */
  dataDir: string;
  /** Operator token for /console/v1; when absent `start` generates one and prints it once. */
  consoleToken: string | undefined;
  /** pino level. */
  logLevel: string;
  /** Honour X-Forwarded-For when deciding the client address (behind a proxy only). */
  trustProxy: boolean;
  /** Lets tests move time through the console (never set in production). */
  testClock: boolean;
  /** Idle time after which an entity actor is stopped, ms. */
  actorIdleMs: number;
  /** How often the periodic jobs (hold release, bonus expiry, month close) run, ms. */
  jobIntervalMs: number;
  /** Largest accepted request body, bytes. */
  bodyLimitBytes: number;
}

function int(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

/** Reads the configuration from `env` (process.env by default). Throws on a malformed value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env.PORT, 8080, 'PORT');
  const publicUrl = (env.SWITCHBOARD_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new Error(`SWITCHBOARD_PUBLIC_URL is not a URL: "${publicUrl}"`);
  }
  return {
    port,
    host: env.HOST || '0.0.0.0',
    publicUrl,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.SWITCHBOARD_DATA_DIR || '.switchboard'),
    consoleToken: env.SWITCHBOARD_CONSOLE_TOKEN || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: env.SWITCHBOARD_TRUST_PROXY === '1',
    testClock: env.SWITCHBOARD_TEST_CLOCK === '1',
    actorIdleMs: int(env.SWITCHBOARD_ACTOR_IDLE_MS, 60_000, 'SWITCHBOARD_ACTOR_IDLE_MS'),
    jobIntervalMs: int(env.SWITCHBOARD_JOB_INTERVAL_MS, 30_000, 'SWITCHBOARD_JOB_INTERVAL_MS'),
    bodyLimitBytes: 1024 * 1024,
  };
}
