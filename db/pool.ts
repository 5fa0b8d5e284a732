import pg from 'pg';

// bigint columns hold cents and counters that stay far inside Number.MAX_SAFE_INTEGER.
pg.types.setTypeParser(20, (v) => Number(v));
// date columns are period keys ('2026-11-22'), compared as text: never shifted into a local Date.
pg.types.setTypeParser(1082, (v) => v);

export type Pool = pg.Pool;
export type Client = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

/** Longest wait for a connection (a new one, or a free one of the pool). */
export const CONNECT_TIMEOUT_MS = 5_000;

export function createPool(url: string, max = 20, opts: { asyncCommit?: boolean } = {}): Pool {
  // Sessions in UTC: day and month keys (date casts) are UTC days, as the spec's periods are.
  // asyncCommit: commits return before the WAL reaches disk; a crash may lose the last few, so
  // only for bookkeeping whose loss is a retry (webhook attempts: delivery is at-least-once).
  const options = `-c TimeZone=UTC${opts.asyncCommit ? ' -c synchronous_commit=off' : ''}`;
  // connectionTimeoutMillis bounds both a new connection and the wait for a free one: a request
  // answers 503 (isDatabaseUnreachable) rather than hanging on a database that does not answer.
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, options });
  // An idle client losing its server emits here; without a listener the process would crash.
  pool.on('error', () => {});
  // So does a client checked out of the pool (inside a transaction) whose connection is cut: pg
  // emits 'error' on it besides failing its query, and the pool listens only while it is idle.
  // The query's own error carries the news; the pool drops the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Runs `fn` in one transaction: committed if it returns, rolled back if it throws.
 * Every change that must be all-or-nothing goes through here.
 */
export async function withTransaction<T>(pool: Pool, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * A named statement for the hot paths (authentication, readiness, customer lookup): PostgreSQL
 * plans it once per connection instead of on every request, which is most of the cost of a
 * small query (measured: 0.57 ms unnamed against 0.19 ms prepared for the readiness read).
 */
export function prepared(name: string, text: string) {
  return (values: unknown[]): pg.QueryConfig => ({ name, text, values });
}

/** A row referenced something that does not exist (foreign key violation). */
export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === '23503';
}

/** Unique-violation check for ON CONFLICT-less inserts. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * SQLSTATEs of a server that is shutting down, restarting or not taking sessions right now:
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300
 * too_many_connections; and class 08, connection exceptions (checked by prefix).
 */
const UNREACHABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of a connection that cannot be made or was cut. */
const UNREACHABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** What pg and pg-pool throw when a connection ends, cannot be made in time, or broke earlier. */
const UNREACHABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|timeout expired|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/**
 * Whether `err` means "the database cannot be reached right now" (a restart, a failover, a cut
 * connection, a full server), as opposed to a fault of the query or of the data. The one place
 * that decides it: HTTP answers these 503 with Retry-After, and loops back off quietly
 * (runtime/database-health.ts). Socket errors count only with a `syscall`, as Node's own socket
 * errors carry: an HTTP client's error with the same code is another service's outage.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown; errors?: unknown };
  if (typeof e.code === 'string') {
    if (UNREACHABLE_SQLSTATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true;
    if (typeof e.syscall === 'string' && UNREACHABLE_SOCKET_CODES.has(e.code)) return true;
  }
  if (typeof e.message === 'string' && UNREACHABLE_MESSAGES.test(e.message)) return true;
  // A connect to a name with several addresses fails with every attempt's error (AggregateError).
  return Array.isArray(e.errors) && e.errors.some(isDatabaseUnreachable);
}
