import type pg from 'pg';
import type { Pool } from './pool.ts';

/** Longest the readiness probe waits for PostgreSQL's answer, ms: a load balancer's check must not hang. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * The readiness probe's round trip (http/routes/health.ts): one trivial statement on the pool,
 * bounded. Throws pg's or the socket's error when the database cannot answer.
 */
export async function probeDatabase(pool: Pool): Promise<void> {
  // query_timeout is pg's per-query read timeout (missing from its QueryConfig type).
  await pool.query({ text: 'SELECT 1', query_timeout: PROBE_TIMEOUT_MS } as pg.QueryConfig);
}
