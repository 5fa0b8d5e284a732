import type { Queryable } from './pool.ts';

/**
 * The inboxes and outboxes as the metrics see them (runtime/metrics.ts, read when scraped): rows
 * waiting and the age of the oldest, in one statement. Each arm reads its table's partial "due"
 * index (only unprocessed rows are in it), so the cost follows the backlog, never the table.
 * Ages are against the database's now(): the columns read are real time.
 */
const QUEUES = `
  SELECT 'carrier_reports' AS queue, count(*)::int AS depth,
         coalesce(extract(epoch FROM now() - min(received_at)), 0)::float8 AS oldest_age_seconds
    FROM carrier_reports WHERE processed_at IS NULL
  UNION ALL
  SELECT 'processor_events', count(*)::int, coalesce(extract(epoch FROM now() - min(received_at)), 0)::float8
    FROM processor_events WHERE processed_at IS NULL
  UNION ALL
  SELECT 'webhook_deliveries', count(*)::int, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
    FROM webhook_deliveries WHERE status IN ('pending', 'failed')
  UNION ALL
  SELECT 'email_outbox', count(*)::int, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
    FROM email_outbox WHERE status = 'pending'`;

export interface QueueDepth {
  queue: string;
  depth: number;
  oldestAgeSeconds: number;
}

export async function queueDepths(db: Queryable): Promise<QueueDepth[]> {
  const { rows } = await db.query<{ queue: string; depth: number; oldest_age_seconds: number }>(QUEUES);
  // A clock behind the rows' own (a test clock) would give a negative age: none waits that long.
  return rows.map((r) => ({ queue: r.queue, depth: r.depth, oldestAgeSeconds: Math.max(0, r.oldest_age_seconds) }));
}
