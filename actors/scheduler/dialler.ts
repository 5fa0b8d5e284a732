import os from 'node:os';
import crypto from 'node:crypto';
import type { Deps } from '../../runtime/deps.ts';
import type { EntityRegistry } from '../../runtime/actor-system.ts';
import { isDatabaseUnreachable, withTransaction } from '../../db/pool.ts';
import { pollLoop } from '../../runtime/poll-loop.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { createMoneyRepository } from '../../db/money.ts';
import { recordEvent } from '../../db/events.ts';
import { checkReadiness } from '../customer/readiness-check.ts';
import { callView } from '../call/views.ts';
import { LEASE_SECONDS } from '../call/call-keeper.ts';
import { recoverUndialled } from '../call/call-jobs.ts';
import { isOpen, nextOpening } from './calling-windows.ts';
import type { AccountMessage, AccountReplies } from '../account/messages.ts';
import type { CallMessage, CallReplies } from '../call/messages.ts';

/**
 * The dialler: claims due requests (FOR UPDATE SKIP LOCKED, so any number of diallers never dial
 * one twice), passes each through every gate on the call path, and hands the ones that pass to a
 * call actor. No gate can be skipped by a parameter: a request carries only who and whom to call.
 *
 * Gates, in order: the request's deadline; do-not-call (the account's list and national
 * registries); customer readiness (the same function as the readiness endpoint, which in test
 * mode leaves out the four live-money gates); the calling window of the called number; this
 * process's capacity; then balance, spend caps and concurrency (the account actor's startCall).
 * A request that may not be dialled yet goes back to the queue with the time it may next try and
 * the reason it waits; it is never failed for a transient reason.
 */

/** How long to wait before trying again, by reason. Windows wait for their next opening instead. */
const RETRY_MS: Record<string, number> = {
  concurrency_limit: 15_000,
  platform_at_capacity: 10_000,
  insufficient_balance: 10 * 60_000,
  spend_cap_daily: 30 * 60_000,
  spend_cap_monthly: 6 * 3600_000,
  customer_spend_cap_daily: 30 * 60_000,
  customer_spend_cap_monthly: 6 * 3600_000,
  not_ready: 10 * 60_000,
  no_caller_id: 10 * 60_000,
};

export interface DiallerOptions {
  /** Most calls this process runs at once (`platform_at_capacity` beyond it). */
  maxCalls: number;
  /** How often the queue is looked at, ms. */
  pollMs: number;
  batch: number;
}

export class Dialler {
  readonly id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  private stopLoop: (() => void) | undefined;
  private running: Promise<number> | undefined;
  /**
   * Requests whose admission failed and could not even be put back (the database went away
   * mid-round): they are still claimed by this process, which renews their lease, so nobody else
   * would ever take them. Each round puts them back first.
   */
  private readonly stranded = new Set<string>();

  constructor(
    private readonly deps: Deps & {
      accounts: EntityRegistry<AccountMessage, AccountReplies, any>;
      calls: EntityRegistry<CallMessage, CallReplies, any>;
      liveCalls: Set<string>;
    },
    private readonly options: DiallerOptions,
  ) {}

  start(): void {
    this.stopLoop = pollLoop(() => this.tick(), this.options.pollMs, this.deps.log, 'dialler');
  }

  async stop(): Promise<void> {
    this.stopLoop?.();
    await this.running;
  }

  /** One round: claim what is due and admit each request. Returns how many were dialled. */
  tick(): Promise<number> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<number> {
    const { pool, clock } = this.deps;
    for (const id of this.stranded) {
      await this.putBack(id);
      this.stranded.delete(id);
    }
    const free = Math.max(0, this.options.maxCalls - this.deps.liveCalls.size);
    const claimed = await createCallRepository(pool).claimDue(clock.now(), Math.max(1, Math.min(this.options.batch, free || 1)), this.id, LEASE_SECONDS);
    // Requests are admitted side by side; what must be serial (an account's money) is serialised
    // by its row lock in PostgreSQL.
    let unreachable: unknown;
    const results = await Promise.all(
      claimed.map(async (call) => {
        try {
          return await this.admit(call);
        } catch (err) {
          // The database going away mid-round is the poll loop's to report, once per outage.
          if (isDatabaseUnreachable(err)) unreachable ??= err;
          else this.deps.log.error({ err, call_id: call.id }, 'admitting a request failed; it goes back to the queue');
          await this.putBack(call.id).catch(() => this.stranded.add(call.id));
          return false;
        }
      }),
    );
    if (unreachable) throw unreachable;
    return results.filter(Boolean).length;
  }

  private async admit(call: CallRow): Promise<boolean> {
    const { pool, clock } = this.deps;
    const now = clock.now();
    if (call.dial_before <= now) {
      await this.end(call, 'expired', 'expired');
      return false;
    }
    if (await createDncRepository(pool).blockedBy(call.account_id, call.to_e164)) {
      await this.end(call, 'blocked', 'do_not_call_listed');
      return false;
    }
    const readiness = await checkReadiness(pool, call.customer_id, now);
    if (!readiness || !readiness.assessment.ready) {
      await this.wait(call, readiness?.assessment.blockers[0]?.code ?? 'not_ready', new Date(now.getTime() + RETRY_MS.not_ready));
      return false;
    }
    if (!isOpen(call.to_e164, call.to_country, now)) {
      await this.wait(call, 'outside_calling_window', nextOpening(call.to_e164, call.to_country, now));
      return false;
    }
    if (this.deps.liveCalls.size >= this.options.maxCalls) {
      await createMoneyRepository(pool).logActivity({
        accountId: call.account_id,
        mode: call.mode,
        customerId: call.customer_id,
        kind: 'call_start_refused',
        reason: 'platform_at_capacity',
        reference: call.id,
        now,
      });
      await this.wait(call, 'platform_at_capacity', new Date(now.getTime() + RETRY_MS.platform_at_capacity));
      return false;
    }
    const from = await createCallRepository(pool).callerIdOf(call.customer_id);
    if (!from) {
      await this.wait(call, 'no_number_in_country', new Date(now.getTime() + RETRY_MS.no_caller_id));
      return false;
    }
    const started = await this.deps.accounts.ask(call.account_id, {
      type: 'start_call',
      mode: call.mode,
      customerId: call.customer_id,
      reference: call.id,
    });
    if (!started.ok) {
      await this.wait(call, started.reason, new Date(now.getTime() + (RETRY_MS[started.reason] ?? 60_000)));
      return false;
    }
    await this.deps.calls.ask(call.id, { type: 'dial', from });
    return true;
  }

  /**
   * A request whose admission failed: back to the queue in a minute, or, if it had already taken
   * its hold (it was being dialled), closed as lost with nothing charged rather than risk calling
   * twice (call-jobs.ts `recoverUndialled`).
   */
  private async putBack(id: string): Promise<void> {
    const now = this.deps.clock.now();
    await recoverUndialled(this.deps.pool, id, now, this.deps.config.publicUrl, { at: new Date(now.getTime() + 60_000), reason: 'not_ready' });
  }

  private async wait(call: CallRow, reason: string, at: Date): Promise<void> {
    // Never wait past the deadline: the request expires then instead.
    const until = at < call.dial_before ? at : call.dial_before;
    await createCallRepository(this.deps.pool).requeue(call.id, until, reason, this.deps.clock.now());
  }

  /** Ends a request that will never be dialled, with its reason, and tells the reseller. */
  private async end(call: CallRow, status: 'expired' | 'blocked', outcome: string): Promise<void> {
    const now = this.deps.clock.now();
    await withTransaction(this.deps.pool, async (client) => {
      const summary =
        status === 'blocked' ? 'The number is on a do-not-call list, so it was not dialled.' : 'The request was not dialled before its deadline.';
      const row = await createCallRepository(client).update(call.id, { status, outcome, summary, ended_at: now, updated_at: now, claimed_at: null, claimed_by: null });
      await recordEvent(client, { accountId: call.account_id, mode: call.mode, type: 'call.completed', data: callView(row, this.deps.config.publicUrl), now });
    });
  }
}
