import type { Deps } from '../../runtime/deps.ts';
import { countWebhookDelivery } from '../../runtime/metrics.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { WakeableLoop } from '../../runtime/wakeable-loop.ts';
import { DatabaseHealth } from '../../runtime/database-health.ts';
import { createWebhookRepository, type ClaimedDelivery } from '../../db/webhooks.ts';
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
  private readonly loop: WakeableLoop;
  private readonly inFlight = new Set<Promise<void>>();
  /** Claims run one at a time in a process; the attempts they start run side by side. */
  private claiming: Promise<unknown> = Promise.resolve();
  private readonly health: DatabaseHealth;

  constructor(
    private readonly deps: Deps & { secrets: SecretBox },
    private readonly options: SenderOptions,
  ) {
    this.health = DatabaseHealth.of(deps.log);
    this.loop = new WakeableLoop(() => this.tick(), options.pollMs, deps.log, 'webhook sender');
  }

  start(): void {
    this.loop.start();
  }

  /** Wakes the sender now (an event was just recorded). Many events commit at once: one claim serves them all. */
  poke(): void {
    this.loop.poke();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.claiming.catch(() => {});
    await Promise.all(this.inFlight);
  }

  /** Claims what is due (up to free capacity), starts sending it, and resolves when those attempts are done. */
  async tick(): Promise<number> {
    const claimed = this.claiming.catch(() => {}).then(() => this.claim());
    this.claiming = claimed;
    const deliveries = await claimed;
    const sends = deliveries.map((d) => {
      // An attempt whose outcome cannot be recorded is sent again once its claim runs out.
      const p = this.send(d).catch((err) => {
        if (!this.health.failed(err, 'webhook sender')) this.deps.log.error({ err, delivery_id: d.id }, 'webhook attempt failed to record');
      });
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
      return p;
    });
    await Promise.all(sends);
    return deliveries.length;
  }

  /** One round now, then every attempt still in flight (tests and the console wait for the outcome). */
  async drain(): Promise<number> {
    const claimed = await this.tick();
    await Promise.all(this.inFlight);
    return claimed;
  }

  private async claim(): Promise<ClaimedDelivery[]> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0 || this.loop.stopped) return [];
    // Delivery runs on real time (runtime/clock.ts): a receiver checks the signed timestamp against its own clock.
    const now = this.deps.realClock.now();
    return createWebhookRepository(this.deps.pool).claimDue(now, new Date(now.getTime() + CLAIM_MS), free);
  }

  private async send(d: ClaimedDelivery): Promise<void> {
    const { pool, realClock: clock, log } = this.deps;
    const repo = createWebhookRepository(pool);
    const { endpoint, event } = d;
    const attemptAt = clock.now();
    // A delivery its endpoint no longer takes ends without an attempt: the endpoint was disabled or
    // deleted, or moved to the other mode in the console (spec: a test endpoint never receives live
    // events and the reverse).
    const refusal =
      endpoint.deleted_at || !endpoint.enabled
        ? 'endpoint disabled or deleted'
        : endpoint.mode !== event.mode
          ? `endpoint moved to ${endpoint.mode} mode; ${event.mode} events are not sent to it`
          : null;
    if (refusal) {
      await repo.finishAttempt(
        { id: d.id, attempt: d.attempts, attemptedAt: attemptAt, durationMs: 0 },
        { status: 'dead', nextAttemptAt: attemptAt, statusCode: null, error: refusal, now: attemptAt },
      );
      countWebhookDelivery('refused', d.attempts + 1);
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
    const attempt = d.attempts + 1;
    const now = clock.now();
    const next = nextAttempt(attempt, result.statusCode, now);
    const outcome = next.state === 'succeeded' ? 'succeeded' : next.state === 'dead' ? 'dead' : 'failed';
    await repo.finishAttempt(
      { id: d.id, attempt, attemptedAt: attemptAt, durationMs: Math.round(result.durationMs) },
      {
        status: outcome,
        nextAttemptAt: next.state === 'retry' ? next.at : now,
        statusCode: result.statusCode,
        error: result.error ?? (next.state === 'dead' && next.reason === 'gone' ? 'endpoint answered 410: retries stopped' : null),
        now,
        responseExcerpt: result.responseExcerpt,
      },
    );
    countWebhookDelivery(outcome, attempt);
  }
}
