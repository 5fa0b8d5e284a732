import { loadConfig, SettingError } from '../runtime/config.ts';
import { createLogger, logDestination } from '../runtime/logger.ts';
import { startService } from './start.ts';
import { adminUsage, runAdmin } from './admin-cli.ts';
import { migrateAt } from '../db/migrate.ts';

const USAGE = `Usage: switchboard <command>

  start [--new-admin-token]     run the whole service in this process
  migrate                       apply database migrations to SWITCHBOARD_DIRECT_DATABASE_URL (default DATABASE_URL)
  admin <action> [flags]        operator actions against a running service (see: switchboard admin)
`;

/**
 * Stops the service on SIGINT/SIGTERM: HTTP first, the embedded database last, then exits. The
 * handlers are installed before start-up begins, so a signal that arrives while the database is
 * already up but HTTP is not yet listening still stops the database (it waits for start-up).
 */
async function start(args: string[]): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, logDestination());
  let signalled: string | undefined;
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  // A signal while start-up waits for the database gives the wait up (app/database-wait.ts).
  const startUp = new AbortController();
  const stop = () =>
    (service ? service.stop() : Promise.resolve()).then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  const onSignal = (signal: string) => {
    if (signalled) return;
    signalled = signal;
    log.info({ signal }, service ? 'stopping' : 'stopping once start-up has finished');
    if (service) void stop();
    else startUp.abort();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  service = await startService(config, { logger: log, newAdminToken: args.includes('--new-admin-token'), signal: startUp.signal }).catch((err) => {
    if (err?.name === 'StartRefused') {
      log.fatal({ ...err.fields }, err.message);
      process.exit(2);
    }
    if (err?.name !== 'StartAborted') throw err;
    log.info({ signal: signalled }, 'stopped while waiting for the database');
    process.exit(0);
  });
  // The service runs until it is signalled. A role with no server of its own (the webhook sender)
  // holds nothing but database sockets and unref'd timers: without this, losing the database
  // would empty the event loop and end the process quietly, with status 0.
  setInterval(() => {}, 2 ** 30);
  if (signalled) return stop();
  // Under pm2 (`wait_ready: true` in ecosystem.config.cjs) a reload stops the old process only once
  // the new one says it is ready: after its roles started and its HTTP server listens.
  // With a callback, a parent that went away is no uncaught error.
  if (process.send && process.connected) process.send('ready', undefined, {}, () => {});
}

/**
 * A reader that goes away (`switchboard admin … | head`) is not a fault. Node reports the closed
 * pipe as an 'error' event (EPIPE) on process.stdout or process.stderr, which without a listener
 * is an uncaught exception and a stack trace. A one-shot command then exits quietly with the
 * status it had; `start` keeps serving and drops what it would have printed (its pino destination
 * drops log lines on EPIPE by itself).
 */
function whenReaderGoes(onGone: () => void): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      onGone();
    });
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  whenReaderGoes(command === 'start' ? () => {} : () => process.exit(process.exitCode ?? 0));
  switch (command) {
    case 'start':
      return start(rest);
    case 'migrate': {
      const config = loadConfig();
      if (!config.databaseUrl) throw new SettingError('migrate needs DATABASE_URL (start migrates the embedded database itself)');
      // The migrations' lock is a session's: PostgreSQL itself, not a transaction-mode pooler.
      const applied = await migrateAt(config.directDatabaseUrl ?? config.databaseUrl);
      process.stdout.write(`${JSON.stringify({ applied })}\n`);
      return;
    }
    case 'admin':
      if (rest.length === 0) {
        process.stdout.write(`${adminUsage()}\n`);
        return;
      }
      process.exitCode = await runAdmin(rest);
      return;
    default:
      process.stderr.write(USAGE);
      process.exitCode = command ? 2 : 0;
  }
}
