import pg from 'pg';
import { CONNECT_TIMEOUT_MS, isDatabaseUnreachable } from '../runtime/database-errors.ts';
import { DatabaseHosts } from '../runtime/database-hosts.ts';

// bigint columns hold cents and counters that stay far inside Number.MAX_SAFE_INTEGER.
pg.types.setTypeParser(20, (v) => Number(v));
// date columns are period keys ('2026-11-22'), compared as text: never shifted into a local Date.
pg.types.setTypeParser(1082, (v) => v);

export type Pool = pg.Pool;
export type Client = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

export interface PoolOptions {
  /**
   * Commits return before the WAL reaches disk; a crash may lose the last few, so only for
   * bookkeeping whose loss is a retry (webhook attempts: delivery is at-least-once). Dropped
   * behind a transaction-mode pooler (docs/decisions.md, "PgBouncer in transaction mode").
   */
  asyncCommit?: boolean;
  /**
   * `transaction`: `url` is a transaction-mode pooler (PgBouncer), where a session's state does
   * not follow the client. No startup options are sent (PgBouncer before 1.20 refuses them; the
   * role's own `timezone` must be UTC: `sessionTimeZoneUnlessUtc`), and every named statement
   * (`prepared`) is sent unnamed, since it would exist only on the server connection that parsed it.
   */
  pooler?: 'none' | 'transaction';
}

export function createPool(url: string, max = 20, opts: PoolOptions = {}): Pool {
  const pooled = opts.pooler === 'transaction';
  // Sessions in UTC: day and month keys (date casts) are UTC days, as the spec's periods are.
  const options = pooled ? undefined : `-c TimeZone=UTC${opts.asyncCommit ? ' -c synchronous_commit=off' : ''}`;
  // connectionTimeoutMillis bounds both a new connection and the wait for a free one: a request
  // answers 503 (isDatabaseUnreachable) rather than hanging on a database that does not answer.
  // Client: connects to the host of DATABASE_URL's list believed primary, and moves on when it
  // is not (runtime/database-hosts.ts); one host behaves as pg.Client does.
  const { Client } = DatabaseHosts.of(url);
  const pool = new pg.Pool({ Client, connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, options });
  // An idle client losing its server emits here; without a listener the process would crash.
  pool.on('error', () => {});
  // So does a client checked out of the pool (inside a transaction) whose connection is cut: pg
  // emits 'error' on it besides failing its query, and the pool listens only while it is idle.
  // The query's own error carries the news; the pool drops the broken client when it is released.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    if (pooled) unnamedStatements(client);
  });
  return pool;
}

/**
 * Sends every query of `client` without a statement name: pg would parse a named statement once
 * and then only bind it, on whichever server connection the pooler gives the next transaction,
 * where it does not exist ("prepared statement … does not exist").
 */
function unnamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
    const c = config as { name?: string; submit?: unknown } | null;
    // A plain config object only; a Submittable (pg.Query, a cursor) is passed as it is.
    const plain = c && typeof c === 'object' && typeof c.submit !== 'function' && c.name !== undefined;
    return query(plain ? { ...c, name: undefined } : config, ...rest);
  };
}

/**
 * Behind a transaction-mode pooler no startup option sets the session's time zone, so the
 * session has the role's (or the database's, or the server's) default: day and month keys are
 * UTC days only if that is UTC. Null when it is; else the session's time zone and role.
 */
export async function sessionTimeZoneUnlessUtc(pool: Pool): Promise<{ zone: string; role: string } | null> {
  const { rows } = await pool.query(`SELECT current_setting('TimeZone') AS zone, current_user AS role`);
  const found = rows[0] as { zone: string; role: string };
  return /^(Etc\/)?(UTC|UCT|Universal|Zulu|GMT|GMT[+-]?0|Greenwich)$/i.test(found.zone) ? null : found;
}

/**
 * Runs `fn` in one transaction: committed if it returns, rolled back if it throws.
 * Every change that must be all-or-nothing goes through here.
 */
export async function withTransaction<T>(pool: Pool, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    afterCommitWork.set(client, []);
    const result = await fn(client);
    await client.query('COMMIT');
    runAfterCommit(afterCommitWork.get(client));
    return result;
  } catch (err) {
    // A cut connection, a write refused as read-only (SQLSTATE 25006: the host was demoted or
    // fenced), or a named statement made stale by a migration (isStaleNamedStatement): released
    // with the error, so the pool drops the client instead of lending it again.
    if (isDatabaseUnreachable(err)) broken = err as Error;
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    afterCommitWork.delete(client);
    client.release(broken);
  }
}

/** What waits for the open transaction of a client to commit (`afterCommit`). */
const afterCommitWork = new WeakMap<Client, (() => void)[]>();

/**
 * Runs `work` once the transaction `db` is in has committed, never if it rolls back; at once when
 * `db` is in none (its statements have committed already). For counting what committed (the
 * operator's metrics), never for anything that must happen: a crash between the commit and the
 * work loses the work.
 */
export function afterCommit(db: Queryable, work: () => void): void {
  const waiting = afterCommitWork.get(db as Client);
  if (waiting) waiting.push(work);
  else runAfterCommit([work]);
}

/** The transaction has committed whatever the work does: a throw is dropped, never taken for the transaction's failure. */
function runAfterCommit(works: (() => void)[] | undefined): void {
  for (const work of works ?? []) {
    try {
      work();
    } catch {
      /* counting only */
    }
  }
}

/**
 * A named statement for the hot paths (authentication, readiness, customer lookup): PostgreSQL
 * plans it once per connection instead of on every request, which is most of the cost of a
 * small query (measured: 0.57 ms unnamed against 0.19 ms prepared for the readiness read).
 * A pool behind a transaction-mode pooler sends it unnamed (`createPool`'s `pooler`).
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
