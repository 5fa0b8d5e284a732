import type { Config } from '../runtime/config.ts';
import type { Logger } from '../runtime/logger.ts';
import type { Pool } from '../db/pool.ts';
import { queueDepths } from '../db/queue-depths.ts';
import { collectProcessMetrics, watchPool, watchQueues } from '../runtime/metrics.ts';
import { startMetricsServer, type MetricsServer } from '../runtime/metrics-server.ts';

/**
 * The metrics port of this process, when SWITCHBOARD_METRICS_PORT asks for it: the pools and the
 * queues are read when scraped, the process's own metrics are collected, and the server listens.
 * Returns the server (undefined when off) and what stops it all.
 */
export async function startMetrics(
  config: Pick<Config, 'metrics'>,
  pools: { main: Pool; sender: Pool },
  log: Logger,
): Promise<{ server: MetricsServer | undefined; stop: () => Promise<void> }> {
  if (!config.metrics) return { server: undefined, stop: async () => {} };
  collectProcessMetrics();
  const unwatch = [watchPool('main', pools.main), watchPool('sender', pools.sender), watchQueues(() => queueDepths(pools.main))];
  const server = await startMetricsServer({ ...config.metrics, log });
  return {
    server,
    stop: async () => {
      unwatch.forEach((u) => u());
      await server.close();
    },
  };
}
