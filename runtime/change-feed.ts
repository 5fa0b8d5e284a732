import pg from 'pg';
import type { Logger } from './logger.ts';
import { DatabaseHealth, retryDelayMs } from './database-health.ts';
import { CONNECT_TIMEOUT_MS } from './database-errors.ts';
import { DatabaseHosts } from './database-hosts.ts';

/** The first wait before reconnecting; it doubles up to RETRY_CAP_MS while the database is away. */
const RECONNECT_BASE_MS = 250;
/** pg_stat_activity's application_name of the feed's connection (operators and tests find it by it). */
export const FEED_APPLICATION_NAME = 'switchboard change feed';

/**
 * Cross-process cache invalidation. A transaction that changes a cached entity calls
 * `pg_notify('switchboard_changes', '<kind>:<id>')`; PostgreSQL delivers it to every listening
 * process after commit, and each drops its cached copy.
 *
 * One connection per process, reconnected for as long as the process runs. Notifications sent
 * while it was away are lost, so after every reconnection the feed emits `reset`, and whoever
 * caches something the feed guards drops all of it (app/start.ts wires this).
 */
export class ChangeFeed {
  private client: pg.Client | undefined;
  private readonly handlers = new Map<string, ((id: string) => void)[]>();
  private readonly resetHandlers: (() => void)[] = [];
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private readonly health: DatabaseHealth;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {
    this.health = DatabaseHealth.of(log);
  }

  on(kind: string, handler: (id: string) => void): void {
    this.handlers.set(kind, [...(this.handlers.get(kind) ?? []), handler]);
  }

  /** `handler` runs after every reconnection: anything cached from before may be stale. */
  onReset(handler: () => void): void {
    this.resetHandlers.push(handler);
  }

  /** Connects and listens; rejects if the first connection fails (start-up stops there). */
  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  /** One connection, listening. Its loss (pg emits 'error' and then 'end') schedules exactly one reconnection. */
  private async connect(): Promise<void> {
    // To the host of DATABASE_URL's list believed primary, as the pools (runtime/database-hosts.ts).
    const client = new (DatabaseHosts.of(this.url).Client)({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: FEED_APPLICATION_NAME });
    const lost = (err?: Error) => {
      // Only the current connection counts: a failed attempt, or one already replaced, is over.
      if (this.client !== client) return;
      this.client = undefined;
      void client.end().catch(() => {});
      if (this.stopped) return;
      if (!this.health.failed(err ?? new Error('Connection terminated'), 'change feed')) {
        this.log.warn({ err }, 'change feed connection lost; reconnecting');
      }
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (n) => {
      const [kind, id] = (n.payload ?? '').split(':');
      for (const h of this.handlers.get(kind) ?? []) h(id);
    });
    try {
      await client.connect();
      await client.query('LISTEN switchboard_changes');
    } catch (err) {
      void client.end().catch(() => {});
      throw err;
    }
    if (this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.health.succeeded('change feed');
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(async () => {
      this.reconnectTimer = undefined;
      if (this.stopped) return;
      try {
        await this.connect();
      } catch (err) {
        if (this.stopped) return;
        this.failures++;
        if (!this.health.failed(err, 'change feed')) this.log.warn({ err }, 'change feed reconnection failed; retrying');
        this.scheduleReconnect();
        return;
      }
      if (this.stopped) return;
      this.log.info({ failed_attempts: this.failures }, 'change feed reconnected; dropping what it guards');
      this.failures = 0;
      for (const h of this.resetHandlers) {
        try {
          h();
        } catch (err) {
          this.log.error({ err }, 'change feed reset handler failed');
        }
      }
    }, retryDelayMs(RECONNECT_BASE_MS, this.failures + 1));
    this.reconnectTimer.unref();
  }
}
