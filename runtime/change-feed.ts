import pg from 'pg';
import type { Logger } from './logger.ts';

/**
 * Cross-process cache invalidation. A transaction that changes a cached entity calls
 * `pg_notify('switchboard_changes', '<kind>:<id>')`; PostgreSQL delivers it to every listening
 * process after commit, and each drops its cached copy. Caches also expire on their own, so a
 * notification lost while reconnecting costs at most their TTL.
 */
export class ChangeFeed {
  private client: pg.Client | undefined;
  private readonly handlers = new Map<string, ((id: string) => void)[]>();
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {}

  on(kind: string, handler: (id: string) => void): void {
    this.handlers.set(kind, [...(this.handlers.get(kind) ?? []), handler]);
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (n) => {
      const [kind, id] = (n.payload ?? '').split(':');
      for (const h of this.handlers.get(kind) ?? []) h(id);
    });
    client.on('error', (err) => {
      this.log.warn({ err }, 'change feed connection lost; reconnecting');
      this.client = undefined;
      if (!this.stopped) setTimeout(() => this.start().catch(() => {}), 1000).unref();
    });
    await client.connect();
    await client.query('LISTEN switchboard_changes');
    this.client = client;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => {});
  }
}
