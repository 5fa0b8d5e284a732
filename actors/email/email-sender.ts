import type { Deps } from '../../runtime/deps.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { WakeableLoop } from '../../runtime/wakeable-loop.ts';
import { DatabaseHealth } from '../../runtime/database-health.ts';
import { createEmailOutboxRepository, type EmailOutcome, type EmailRow } from '../../db/email-outbox.ts';
import type { MailTransport, SendOutcome } from '../../email/transport.ts';
import { composeEmail, EmailNotSendable } from '../../email/compose.ts';
import { recipientsOf } from './recipients.ts';
import { emailBrand } from './brand.ts';
import { nextEmailAttempt } from './retry.ts';

/**
 * The email sender: claims due outbox rows (SKIP LOCKED, with a lease: a sender that dies
 * mid-attempt leaves its rows to another once the lease runs out), resolves who receives each,
 * opens its sealed link, renders it from its kind and data, and hands it to the transport. The
 * outcome is recorded only while the claim still holds the row. A transient failure waits on the
 * schedule of `nextEmailAttempt`; a permanent refusal, or the end of that schedule, is `dead`;
 * a billing email with no one to send to is `skipped`. One log line per failure and per death.
 *
 * At least once: a crash between the server's answer and the record sends the row again, with
 * the same Message-ID (`<row id@from domain>`), so the repeat is recognisable.
 */
export interface EmailSenderOptions {
  pollMs: number;
  /** Emails sent side by side per round. */
  concurrency: number;
}

/** How long a claim holds a row: well above one attempt (the transport bounds each phase). */
export const EMAIL_LEASE_MS = 120_000;
/**
 * A sent email whose record fails (a database blip) is recorded again, backing off from the first
 * to the last of these, until this long before its lease ends: recorded late, the attempt count
 * (`finish` writes only for the claim's attempt) keeps it harmless; unrecorded, the lease sends it again.
 */
const RECORD_BACKOFF_MS = [250, 5_000] as const;
const RECORD_MARGIN_MS = 15_000;
/** Most emails one worker claims before it ends; the next wake-up or poll starts another. */
const WORKER_CAP = 500;

export class EmailSender {
  private readonly loop: WakeableLoop;
  private readonly health: DatabaseHealth;
  /** The workers sending now: at most `concurrency`. */
  private readonly running = new Set<Promise<void>>();
  /** Counts wake-ups: a worker that found nothing due looks again if one came meanwhile. */
  private wakes = 0;
  private claimed = 0;

  constructor(
    private readonly deps: Deps & { secrets: SecretBox; transport: MailTransport },
    private readonly options: EmailSenderOptions,
  ) {
    this.health = DatabaseHealth.of(deps.log);
    this.loop = new WakeableLoop(() => this.wake(), options.pollMs, deps.log, 'email sender');
  }

  start(): void {
    this.loop.start();
  }

  /** Wakes the sender now (an email was just written). */
  poke(): void {
    this.loop.poke();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.allSettled([...this.running]);
  }

  /**
   * Runs the sender now and resolves, with how many emails were claimed meanwhile, when no worker
   * is left (every attempt recorded, nothing due). For tests (`services.mailNow()`).
   */
  async tick(): Promise<number> {
    const before = this.claimed;
    await Promise.all(this.spawn());
    while (this.running.size) await Promise.all([...this.running]);
    return this.claimed - before;
  }

  /** The loop's round (a poll or a wake-up): tops the workers up to `concurrency`; waits only for those it started. */
  private async wake(): Promise<void> {
    await Promise.all(this.spawn());
  }

  /**
   * Workers, up to `concurrency` in all, each claiming one due row at a time until none is due: a
   * slow attempt (a recipient the server holds unanswered) holds only its own worker, a burst of
   * rows all leaves on one wake-up, and a wake-up while workers are busy starts a free one. A
   * wake-up starts one worker; each row claimed starts another while there is room, so an idle
   * poll costs one query and a burst is soon sent `concurrency` at a time.
   */
  private spawn(): Promise<void>[] {
    this.wakes++;
    return this.startWorker();
  }

  private startWorker(): Promise<void>[] {
    if (this.loop.stopped || this.running.size >= this.options.concurrency) return [];
    const worker: Promise<void> = this.work().finally(() => this.running.delete(worker));
    this.running.add(worker);
    return [worker];
  }

  private async work(): Promise<void> {
    const repo = createEmailOutboxRepository(this.deps.pool);
    for (let n = 0; n < WORKER_CAP && !this.loop.stopped; n++) {
      const seen = this.wakes;
      const now = this.deps.realClock.now();
      const claimedAt = performance.now();
      const [row] = await repo.claimDue(now, new Date(now.getTime() + EMAIL_LEASE_MS), 1);
      if (!row) {
        if (this.wakes === seen) return;
        continue; // woken while it looked: a row may have been written just after
      }
      this.claimed++;
      // More may be due: another worker, while there is room (its failure is its own round's).
      for (const more of this.startWorker()) more.catch(() => {});
      // Attempts' records are a source of their own: a full disk can refuse them while claims go
      // through, and the loop's successful rounds must not end (and restart) their streak each time.
      await this.send(row, claimedAt + EMAIL_LEASE_MS).then(
        () => this.health.succeeded('email attempts'),
        (err) => {
          // Its outcome could not be recorded: the lease runs out and a later worker sends it again.
          if (!this.health.failed(err, 'email attempts')) this.deps.log.error({ err, email_id: row.id, kind: row.kind }, 'email attempt could not be recorded; it is sent again after its lease');
        },
      );
    }
  }

  /** `leaseEnds`: when the claim on `row` runs out, on `performance.now()`'s clock. */
  private async send(row: EmailRow, leaseEnds: number): Promise<void> {
    const { pool, realClock, log, config, secrets, transport } = this.deps;
    const repo = createEmailOutboxRepository(pool);
    const finish = (o: Omit<EmailOutcome, 'id' | 'attempt'>) => repo.finish({ id: row.id, attempt: row.attempts, ...o });
    const dead = async (error: string, extra: Record<string, unknown> = {}) => {
      await finish({ status: 'dead', nextAttemptAt: realClock.now(), error, recipients: null, messageId: null, sentAt: null });
      log.error({ email_id: row.id, kind: row.kind, account_id: row.account_id, attempt: row.attempts, error, ...extra }, 'email dead: it will not be sent');
    };

    // The row references its account (a foreign key) and accounts are never deleted.
    const account = (await repo.account(row.account_id))!;
    const to = recipientsOf(row, row.audience === 'billing' ? await repo.people(row.account_id) : []);
    if (to.length === 0) {
      await finish({ status: 'skipped', nextAttemptAt: realClock.now(), error: 'no one on the account holds billing:write', recipients: [], messageId: null, sentAt: null });
      log.info({ email_id: row.id, kind: row.kind, account_id: row.account_id }, 'email skipped: no one on the account holds billing:write');
      return;
    }
    // Test mode, as Stripe's: an email to a test customer reaches only the account's own people
    // (a reseller trying the flow with its own address), never an outside address. Files are kept.
    if (row.mode === 'test' && row.audience === 'customer' && transport.kind === 'smtp') {
      const team = new Set((await repo.people(row.account_id)).map((p) => p.email.toLowerCase()));
      if (!to.every((address) => team.has(address.toLowerCase()))) {
        const error = "test mode: an email to a customer goes only to the account's own people";
        await finish({ status: 'skipped', nextAttemptAt: realClock.now(), error, recipients: [], messageId: null, sentAt: null });
        log.info({ email_id: row.id, kind: row.kind, account_id: row.account_id }, `email skipped: ${error}`);
        return;
      }
    }
    let secret: string | null = null;
    if (row.secret_sealed) {
      try {
        secret = secrets.open(row.secret_sealed);
      } catch {
        return dead('its sealed link cannot be opened (the encryption key changed)');
      }
    }

    let outcome: SendOutcome;
    try {
      const message = await composeEmail({
        id: row.id,
        kind: row.kind,
        mode: row.mode,
        data: row.data,
        secret,
        to,
        accountName: account.name,
        brand: emailBrand(account),
        platform: { name: config.email.platformName, from: config.email.from, publicUrl: config.publicUrl },
      });
      // One deadline: the transport's own abort (a cap here could give up while the send still finished).
      outcome = await transport.send(message);
    } catch (err) {
      if (err instanceof EmailNotSendable) return dead(err.message);
      // A template that cannot render this row: retried on the schedule (a fix may be deployed), logged each time.
      outcome = { ok: false, permanent: false, error: `not rendered: ${(err as Error)?.message ?? err}`.slice(0, 500), responseCode: null };
    }

    const now = realClock.now();
    if (outcome.ok) {
      const sent = outcome;
      await this.recordSent(() => finish({ status: 'sent', nextAttemptAt: now, error: null, recipients: sent.accepted, messageId: sent.messageId, sentAt: now }), leaseEnds);
      if (outcome.rejected.length) log.warn({ email_id: row.id, kind: row.kind, account_id: row.account_id, rejected: outcome.rejected }, 'email sent, but some recipients were refused');
      return;
    }
    const failure = { response_code: outcome.responseCode, transport: transport.kind };
    if (outcome.permanent) return dead(outcome.error, { ...failure, permanent: true });
    const next = nextEmailAttempt(row.attempts, now);
    if (next.state === 'dead') return dead(`${outcome.error} (retries exhausted)`, failure);
    await finish({ status: 'pending', nextAttemptAt: next.at, error: outcome.error, recipients: null, messageId: null, sentAt: null });
    log.warn({ email_id: row.id, kind: row.kind, account_id: row.account_id, attempt: row.attempts, error: outcome.error, retry_at: next.at, ...failure }, 'email not sent; it is tried again');
  }

  /**
   * Records a sent email, trying again with a backoff while the record fails and the lease has
   * time left: the server has the email, and an unrecorded row would be sent again.
   */
  private async recordSent(record: () => Promise<boolean>, leaseEnds: number): Promise<void> {
    let wait: number = RECORD_BACKOFF_MS[0];
    for (;;) {
      try {
        await record();
        return;
      } catch (err) {
        if (this.loop.stopped || performance.now() + wait > leaseEnds - RECORD_MARGIN_MS) throw err;
        this.deps.log.warn({ err }, 'a sent email could not be recorded; recording it again');
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(wait * 2, RECORD_BACKOFF_MS[1]);
      }
    }
  }
}
