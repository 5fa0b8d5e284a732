/**
 * One worker of a pm2 cluster as far as the metrics go (test/integration/metrics-cluster.test.ts):
 * reads its settings as `switchboard start` does (SWITCHBOARD_METRICS_PORT, NODE_APP_INSTANCE,
 * SWITCHBOARD_METRICS_WORKERS), counts `LINES` ledger lines and one open stream, serves its metrics
 * and says `ready <port>` on stdout. Stops on SIGTERM.
 */
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { countLedgerLine, observeJob, streamOpened } from '../../runtime/metrics.ts';
import { startMetricsServer } from '../../runtime/metrics-server.ts';

const config = loadConfig(process.env);
for (let i = 0; i < Number(process.env.LINES ?? 0); i++) countLedgerLine('call', 'test');
observeJob('release_holds', 'ok', Number(process.env.JOB_SECONDS ?? 0.01));
streamOpened();
const server = await startMetricsServer({ ...config.metrics!, log: createLogger('silent') });
process.stdout.write(`ready ${server.port}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
