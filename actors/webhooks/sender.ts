import type { Deps } from '../../runtime/deps.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { createWebhookRepository, type DeliveryRow } from '../../db/webhooks.ts';
import { createEventRepository } from '../../db/events.ts';
import { webhookHeaders } from './signing.ts';
import { DELIVERY_TIMEOUT_MS, deliverOnce, nextAttempt } from './deliver.ts';
import { eventView } from './views.ts';

/**
 * The webhook sender: claims due deliveries (SKIP LOCKED, with a lock that expires, so a sender
 * that dies mid-attempt leaves its deliveries to another) and sends each as its own task, so a
 * slow or dead endpoint never holds back deliveries to others. Each attempt is recorded; the
 * retry schedule and dead-lettering are the pure `nextAttempt`.
 */
export interface SenderOptions {
  pollMs: number;
  /** Attempts in flight at once, per process. */
  concurrency: number;
  allowPrivate: boolean;
}

/** An attempt takes at most 10 s; a claim outlives it comfortably. */
const CLAIM_MS = 60_000;

export class WebhookSender {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private round: Promise<number> | undefined;

  constructor(
    private readonly deps: Deps & { secrets: SecretBox },
    private readonly options: SenderOptions,
  ) {}

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(async () => {
        await this.tick().catch((err) => this.deps.log.error({ err }, 'webhook round failed; next round retries'));
        loop();
      }, this.options.pollMs);
      this.timer.unref();
    };
    loop();
  }

  /** Wakes the sender now (an event was just recorded). */
  poke(): void {
    if (!this.stopped) void this.tick().catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
    await Promise.all(this.inFlight);
  }

  /** Claims what is due (up to free capacity) and starts sending it; resolves when those attempts are done. */
  tick(): Promise<number> {
    this.round ??= this.claimAndSend().finally(() => (this.round = undefined));
    return this.round;
  }

  private async claimAndSend(): Promise<number> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const now = this.deps.clock.now();
    const claimed = await createWebhookRepository(this.deps.pool).claimDue(now, new Date(now.getTime() + CLAIM_MS), free);
    const sends = claimed.map((d) => {
      const p = this.send(d).catch((err) => this.deps.log.error({ err, delivery_id: d.id }, 'webhook attempt failed to record'));
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
      return p;
    });
    await Promise.all(sends);
    return claimed.length;
  }

  private async send(d: DeliveryRow): Promise<void> {
    const { pool, clock, log } = this.deps;
    const repo = createWebhookRepository(pool);
    const endpoint = await repo.endpointById(d.endpoint_id);
    const event = endpoint ? await createEventRepository(pool).get(endpoint.account_id, endpoint.mode, d.event_id) : null;
    const attemptAt = clock.now();
    if (!endpoint || !event || endpoint.deleted_at || !endpoint.enabled) {
      await repo.finishAttempt(d.id, { status: 'dead', attempts: d.attempts, nextAttemptAt: attemptAt, statusCode: null, error: 'endpoint disabled or deleted', now: attemptAt });
      return;
    }
    const secrets = [this.deps.secrets.open(endpoint.secret_ciphertext)];
    if (endpoint.previous_secret_ciphertext && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > attemptAt) {
      secrets.push(this.deps.secrets.open(endpoint.previous_secret_ciphertext));
    }
    const body = JSON.stringify(eventView(event));
    const headers = webhookHeaders({
      id: event.id,
      timestampSeconds: Math.floor(attemptAt.getTime() / 1000),
      body,
      secrets,
      eventType: event.type,
      mode: event.mode,
    });
    const result = await deliverOnce({ url: endpoint.url, body, headers, timeoutMs: DELIVERY_TIMEOUT_MS, allowPrivate: this.options.allowPrivate, log });
    const attempts = d.attempts + 1;
    const now = clock.now();
    await repo.recordAttempt({ delivery_id: d.id, attempt: attempts, attempted_at: attemptAt, status_code: result.statusCode, duration_ms: Math.round(result.durationMs), error: result.error });
    const next = nextAttempt(attempts, result.statusCode, now);
    await repo.finishAttempt(d.id, {
      status: next.state === 'succeeded' ? 'succeeded' : next.state === 'dead' ? 'dead' : 'failed',
      attempts,
      nextAttemptAt: next.state === 'retry' ? next.at : now,
      statusCode: result.statusCode,
      error: result.error ?? (next.state === 'dead' && next.reason === 'gone' ? 'endpoint answered 410: retries stopped' : null),
      now,
    });
  }
}
