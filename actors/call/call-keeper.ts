import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import { pollLoop } from '../../runtime/poll-loop.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import { FINAL_CARRIER_STATUSES, type Carrier } from '../../telephony/carrier.ts';
import type { CarrierInbox } from './carrier-inbox.ts';
import type { MoneyWriter } from '../../money/writer.ts';
import { emitOverdueCompletions, finishLostCall, recoverUndialled } from './call-jobs.ts';
import { TIME_LIMIT_SECONDS } from './outcome.ts';

/**
 * Keeps this process's calls accounted for, whatever happens to other processes or to the
 * carrier's callbacks (DESIGN: "a call whose owner stopped renewing is taken over or finished
 * within a minute, its slot and hold resolved exactly once"):
 * - retries the carrier reports of the inbox that are due;
 * - renews the lease of every running call this process dialled;
 * - takes over running calls whose owner stopped renewing (a killed dialler) and recovers them;
 * - asks the carrier about its own calls whose final report is overdue (a callback lost while
 *   the database was away), and feeds the answer to the inbox;
 * - sends the `call.completed` events whose recording did not come in time.
 * Every step is one conditional statement or goes through the call's own transaction, so any
 * number of processes run it at once.
 */

/** A call's lease: renewed every LEASE_SECONDS / 3, taken over once it ran out. */
export const LEASE_SECONDS = 30;
/** A call ringing this long after dialling has had its final status (the ring timeout is 30 s). */
const RINGING_OVERDUE_MS = 2 * 60_000;
/** A call this long after dialling has ended at the carrier (20-minute limit plus ringing). */
const RUNNING_OVERDUE_MS = (TIME_LIMIT_SECONDS + 120) * 1000;
/** After the media stream stops, the final report is expected within this long. */
const AFTER_MEDIA_MS = 15_000;

export interface CallKeeperDeps extends Deps {
  /** The one money writer: a lost call's hold is settled through it. */
  money: MoneyWriter;
  /** This process's owner id (the dialler's `claimed_by`). */
  owner: string;
  carriers: Record<Mode, Carrier>;
  inbox: CarrierInbox;
}

export class CallKeeper {
  private stopLoop: (() => void) | undefined;
  private running: Promise<unknown> | undefined;
  private lastRenewMs = 0;
  /** Since when leases have been renewed without a failure; orphans are taken only after a whole lease of health. */
  private healthySinceMs: number | null = null;
  /** Calls whose media stream stopped before their end was recorded: when to ask the carrier. */
  private readonly watched = new Map<string, number>();

  constructor(
    private readonly deps: CallKeeperDeps,
    private readonly options: {
      pollMs: number;
      /**
       * Real time in ms (default Date.now): leases run on real time, as the database's now() does,
       * never on a test clock. Tests inject it to play a lease's 30 seconds without waiting them.
       */
      nowMs?: () => number;
    },
  ) {}

  private nowMs(): number {
    return this.options.nowMs?.() ?? Date.now();
  }

  start(): void {
    this.healthySinceMs = this.nowMs();
    this.stopLoop = pollLoop(() => this.tick(), this.options.pollMs, this.deps.log, 'call keeper');
  }

  async stop(): Promise<void> {
    this.stopLoop?.();
    await this.running;
  }

  /** The media stream of a call stopped: if its end is not recorded soon, the carrier is asked. */
  mediaStopped(callId: string): void {
    this.watched.set(callId, this.nowMs() + AFTER_MEDIA_MS);
  }

  /** One round of every duty; a duty that fails (database away) is tried again next round. */
  tick(): Promise<unknown> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<void> {
    const { log } = this.deps;
    let unreachable: unknown;
    const duty = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        // The database being away is the poll loop's to report (one line per outage) and back off on.
        if (isDatabaseUnreachable(err)) unreachable ??= err;
        else log.warn({ err, duty: name }, 'call keeper duty failed; it runs again next round');
      }
    };
    await duty('renew leases', () => this.renew());
    await duty('carrier report retries', () => this.deps.inbox.retryDue());
    await duty('machine verdicts of this process’s calls', () => this.deps.inbox.retryMachineVerdictsOf(this.deps.owner));
    await duty('handed-over calls', () => this.takeOverHandedOver());
    await duty('orphaned calls', () => this.takeOverOrphans());
    await duty('overdue calls', () => this.reconcileOverdue());
    await duty('completion events', () => emitOverdueCompletions(this.deps.pool, this.deps.clock.now(), this.deps.config.publicUrl));
    if (unreachable) throw unreachable;
  }

  private async renew(): Promise<void> {
    if (this.nowMs() - this.lastRenewMs < (LEASE_SECONDS * 1000) / 3) return;
    try {
      await createCallRepository(this.deps.pool).renewLeases(this.deps.owner, LEASE_SECONDS);
      this.lastRenewMs = this.nowMs();
      this.healthySinceMs ??= this.nowMs();
    } catch (err) {
      this.healthySinceMs = null;
      throw err;
    }
  }

  /**
   * Running calls of processes that stopped renewing. Taken only after this process itself has
   * renewed for a whole lease: after a database outage every lease looks expired, and a live
   * owner renews within a third of a lease once the database is back.
   */
  private async takeOverOrphans(): Promise<void> {
    if (this.healthySinceMs === null || this.nowMs() - this.healthySinceMs < LEASE_SECONDS * 1000) return;
    const orphans = await createCallRepository(this.deps.pool).takeOverOrphans(this.deps.owner, LEASE_SECONDS, 20);
    for (const call of orphans) {
      // Asked again in a while if this attempt does not end it (the carrier unreachable, a hangup whose report is lost).
      this.watched.set(call.id, this.nowMs() + AFTER_MEDIA_MS);
      // Whose lease, and how long ago it ran out (on the database's clock, as leases are).
      this.deps.log.warn(
        {
          event: 'lease_taken_over',
          kind: 'call',
          call_id: call.id,
          status: call.status,
          previous_owner: call.previous_owner,
          lease_expired_at: call.previous_lease_expired_at.toISOString(),
          previous_owner_lease_expired: true,
        },
        'a call whose process stopped renewing its lease is recovered here',
      );
      await this.recover(call).catch((err) => this.deps.log.warn({ err, call_id: call.id }, 'recovering a call failed; it is tried again'));
    }
  }

  /**
   * Running calls a stopping dialler handed over (call-drain.ts): taken at once, without the
   * orphans' wait and without hanging up. Their end comes as the carrier reports it (any process
   * records it); one not ended within AFTER_MEDIA_MS is looked up at the carrier as any overdue call.
   */
  private async takeOverHandedOver(): Promise<void> {
    const taken = await createCallRepository(this.deps.pool).takeOverHandedOver(this.deps.owner, LEASE_SECONDS, 50);
    for (const call of taken) {
      this.watched.set(call.id, this.nowMs() + AFTER_MEDIA_MS);
      this.deps.log.info({ call_id: call.id, status: call.status, from: call.handed_over_by, to: this.deps.owner }, 'a call handed over by a stopping dialler is taken over here');
    }
  }

  /** This process's calls whose end should have been reported by now. */
  private async reconcileOverdue(): Promise<void> {
    const nowMs = this.deps.clock.now().getTime();
    const due = new Set<string>();
    for (const [id, at] of this.watched) if (at <= this.nowMs()) due.add(id);
    const mine = await createCallRepository(this.deps.pool).runningOf(this.deps.owner);
    const running = new Set(mine.map((c) => c.id));
    for (const id of this.watched.keys()) if (!running.has(id)) this.watched.delete(id);
    for (const call of mine) {
      // An undialled request of this process is its dialler's, unless it came from an orphan whose recovery failed.
      if (!call.dialed_at) {
        if (due.has(call.id)) await this.recover(call).catch((err) => this.deps.log.warn({ err, call_id: call.id }, 'recovering a call failed; it is tried again'));
        continue;
      }
      const sinceDial = nowMs - call.dialed_at.getTime();
      const overdue = due.has(call.id) || sinceDial > RUNNING_OVERDUE_MS || (call.status !== 'in_progress' && sinceDial > RINGING_OVERDUE_MS);
      if (!overdue) continue;
      this.watched.set(call.id, this.nowMs() + AFTER_MEDIA_MS);
      await this.recover(call).catch((err) => this.deps.log.warn({ err, call_id: call.id }, 'asking the carrier about an overdue call failed; it is tried again'));
    }
  }

  /**
   * Learns a call's end from the carrier and records it through the inbox (so it is processed like
   * any report); hangs up a call still running that no process serves; ends as lost a call the
   * carrier does not know.
   */
  private async recover(call: CallRow): Promise<void> {
    const { pool, clock, config, log } = this.deps;
    if (!call.dialed_at) {
      const r = await recoverUndialled(this.deps, call.id, clock.now(), config.publicUrl);
      if (r) log.info({ call_id: call.id, recovery: r }, r === 'requeued' ? 'a request claimed by a lost process is queued again' : 'a request lost while dialling is closed; nothing was charged');
      return;
    }
    const carrier = this.deps.carriers[call.mode];
    const status = call.carrier_call_id ? await carrier.fetchStatus(call.id, call.carrier_call_id) : null;
    if (status && FINAL_CARRIER_STATUSES.includes(status.status)) {
      await this.deps.inbox.receive({ kind: 'status', report: status }, 'reconciled');
      this.watched.delete(call.id);
      log.info({ call_id: call.id, carrier_status: status.status }, 'a call’s end was learned from the carrier');
    } else if (status) {
      // Still running at the carrier, but its stream is gone, its process is gone, or it outlived
      // its limit: nothing serves it. Its end report follows the hangup (or the next round asks).
      await carrier.hangup(call.carrier_call_id!);
      log.info({ call_id: call.id, carrier_status: status.status }, 'a call nobody serves any more was hung up; its end report follows');
    } else {
      if (await finishLostCall(this.deps, call.id, clock.now(), config.publicUrl)) {
        log.warn({ call_id: call.id }, 'the carrier does not know a lost call; it is closed as failed, nothing charged');
      }
      this.watched.delete(call.id);
    }
  }
}
