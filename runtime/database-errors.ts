/**
 * What the database being away looks like, known to the kernel: supervision (actor-system.ts),
 * the health gate (database-health.ts), the change feed and every loop decide by it, and db/
 * builds its pool with the same connect timeout. Kept apart from db/, which holds the SQL, so
 * the kernel needs nothing above it.
 */

/** Longest wait for a connection (a new one, or a free one of the pool). */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * SQLSTATEs of a server that is shutting down, restarting or not taking sessions right now:
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300
 * too_many_connections; 25006 read_only_sql_transaction, a write reaching a standby (a failover
 * under way: the address already leads to the replica, not yet promoted; the service never opens
 * a read-only transaction itself); and class 08, connection exceptions (checked by prefix).
 */
const UNREACHABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '25006']);
/** Socket errors of a connection that cannot be made or was cut. */
const UNREACHABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** What pg and pg-pool throw when a connection ends, cannot be made in time, or broke earlier. */
const UNREACHABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|timeout expired|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/**
 * SQLSTATE class 53, insufficient resources: 53000, 53100 disk_full, 53200 out_of_memory, 53300
 * too_many_connections, 53400 configuration_limit_exceeded. The server is up but cannot take the
 * work right now; it takes it again when space, memory or connections come back, by itself.
 */
const OUT_OF_RESOURCES = /^53[0-9A-Z]{3}$/;

/** Whether `err` is PostgreSQL refusing work for want of resources (class 53: a full disk, no memory). */
export function isDatabaseOutOfResources(err: unknown): boolean {
  return Boolean(err && typeof err === 'object' && typeof (err as { code?: unknown }).code === 'string' && OUT_OF_RESOURCES.test((err as { code: string }).code));
}

/**
 * A named statement prepared on this connection before a migration changed its row shape (another
 * process of a rolling upgrade migrated): PostgreSQL refuses to run it again ("cached plan must
 * not change result type", SQLSTATE 0A000 from RevalidateCachedQuery; the routine, not the
 * message, which follows lc_messages). Only a new connection parses it afresh, so it counts as the
 * connection being unusable: answered 503 with Retry-After and the connection dropped.
 */
export function isStaleNamedStatement(err: unknown): boolean {
  const e = err as { code?: unknown; routine?: unknown } | null;
  return Boolean(e && typeof e === 'object' && e.code === '0A000' && e.routine === 'RevalidateCachedQuery');
}

/**
 * Whether `err` means "the database cannot be reached right now" (a restart, a failover, a cut
 * connection, a full server: out of disk, memory or connections, SQLSTATE class 53; a named
 * statement this connection can no longer run, `isStaleNamedStatement`), as opposed
 * to a fault of the query or of the data. The one place
 * that decides it: HTTP answers these 503 with Retry-After, and loops back off quietly
 * (runtime/database-health.ts). Socket errors count only with a `syscall`, as Node's own socket
 * errors carry: an HTTP client's error with the same code is another service's outage.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown; errors?: unknown };
  if (typeof e.code === 'string') {
    if (UNREACHABLE_SQLSTATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code) || OUT_OF_RESOURCES.test(e.code)) return true;
    if (typeof e.syscall === 'string' && UNREACHABLE_SOCKET_CODES.has(e.code)) return true;
    if (isStaleNamedStatement(err)) return true;
  }
  if (typeof e.message === 'string' && UNREACHABLE_MESSAGES.test(e.message)) return true;
  // A connect to a name with several addresses fails with every attempt's error (AggregateError).
  return Array.isArray(e.errors) && e.errors.some(isDatabaseUnreachable);
}
