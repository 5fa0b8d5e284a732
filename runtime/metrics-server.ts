import http from 'node:http';
import client from 'prom-client';
import type { Logger } from './logger.ts';
import { metricsRegistry } from './metrics.ts';

/**
 * The metrics port (SWITCHBOARD_METRICS_PORT): a plain HTTP server of its own, never the API's, on
 * 127.0.0.1 unless SWITCHBOARD_METRICS_HOST says otherwise. Each process listens on the base port
 * plus its pm2 instance number (NODE_APP_INSTANCE), so the workers of a pm2 cluster each have one:
 *
 * - `GET /metrics`: this process's metrics (Prometheus text). Scrape every worker's port, or:
 * - `GET /metrics/cluster`: the metrics of all `workers` of this app (ports base … base+workers-1),
 *   asked over loopback for their JSON and added up by prom-client's `AggregatorRegistry.aggregate`
 *   (counters and histograms summed, gauges by each metric's `aggregator`). pm2's cluster primary
 *   is pm2's own daemon, where prom-client's `clusterMetrics()` cannot run, so the workers ask
 *   each other instead (docs/decisions.md, "Metrics on a port of their own").
 * - `GET /metrics.json`: this process's metrics as JSON, what the cluster view reads.
 *
 * Anything else is 404.
 */
export interface MetricsServerOptions {
  host: string;
  /** Base port; this process listens on `port + instance` (0: a free port, tests only). */
  port: number;
  /** This process's instance number under pm2 (NODE_APP_INSTANCE), 0 otherwise. */
  instance: number;
  /** How many instances of this app listen from the base port up (the cluster view asks each). */
  workers: number;
  log: Logger;
}

export interface MetricsServer {
  /** The port this process listens on. */
  port: number;
  url: string;
  close(): Promise<void>;
}

/** How long the cluster view waits for one worker. */
const PEER_TIMEOUT_MS = 2_000;

export function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const log = opts.log.child({ component: 'metrics' });
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'text/plain', 'method not allowed\n');
    const path = (req.url ?? '/').split('?')[0];
    const reply = (p: Promise<{ type: string; body: string }>) =>
      p.then(
        ({ type, body }) => answer(res, 200, type, body),
        (err) => {
          log.error({ err }, 'metrics could not be collected');
          answer(res, 500, 'text/plain', 'metrics could not be collected\n');
        },
      );
    switch (path) {
      case '/metrics':
        return void reply(metricsRegistry.metrics().then((body) => ({ type: metricsRegistry.contentType, body })));
      case '/metrics.json':
        return void reply(metricsRegistry.getMetricsAsJSON().then((json) => ({ type: 'application/json', body: JSON.stringify(json) })));
      case '/metrics/cluster':
        return void reply(clusterMetrics(opts, port).then((body) => ({ type: metricsRegistry.contentType, body })));
      default:
        return answer(res, 404, 'text/plain', 'not found\n');
    }
  });
  // Scrapes are short; nothing holds a connection open for long.
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  let port = opts.port === 0 ? 0 : opts.port + opts.instance;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, opts.host, () => {
      server.off('error', reject);
      const address = server.address();
      port = typeof address === 'object' && address ? address.port : port;
      log.info({ host: opts.host, port, instance: opts.instance }, 'metrics listening');
      resolve({
        port,
        url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

function answer(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/** Every worker's metrics added up; a worker that does not answer is left out and counted. */
async function clusterMetrics(opts: MetricsServerOptions, ownPort: number): Promise<string> {
  const ports: number[] = [];
  if (opts.port !== 0) for (let i = 0; i < Math.max(1, opts.workers); i++) ports.push(opts.port + i);
  const host = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  const results = await Promise.all(
    (ports.length ? ports : [ownPort]).map((p) => (p === ownPort ? metricsRegistry.getMetricsAsJSON() : peerMetrics(host, p).catch(() => null))),
  );
  const answered = results.filter((r): r is client.MetricObjectWithValues<client.MetricValue<string>>[] => r !== null);
  const aggregated = client.AggregatorRegistry.aggregate(answered);
  const workers = new client.Registry();
  const gauge = new client.Gauge({
    name: 'switchboard_metrics_workers',
    help: 'Workers the cluster view asked, by whether they answered.',
    labelNames: ['state'] as const,
    registers: [workers],
  });
  gauge.set({ state: 'answered' }, answered.length);
  gauge.set({ state: 'missing' }, results.length - answered.length);
  return (await aggregated.metrics()) + (await workers.metrics());
}

async function peerMetrics(host: string, port: number): Promise<client.MetricObjectWithValues<client.MetricValue<string>>[]> {
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics.json`;
  const response = await fetch(url, { signal: AbortSignal.timeout(PEER_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`worker on port ${port} answered ${response.status}`);
  return (await response.json()) as client.MetricObjectWithValues<client.MetricValue<string>>[];
}
