import os from 'node:os';
import crypto from 'node:crypto';
import type { Deps } from '../../runtime/deps.ts';
import type { EntityRegistry } from '../../runtime/actor-system.ts';
import { withTransaction } from '../../db/pool.ts';
import { isDatabaseUnreachable } from '../../runtime/database-errors.ts';
import { pollLoop } from '../../runtime/poll-loop.ts';
import { createCallRepository, type CallRow } from '../../db/calls.ts';
import type { MoneyWriter, StartCallResult } from '../../money/writer.ts';
import { recordEvent } from '../../db/events.ts';
import { loadAdmissionFactsOfMany, loadDialCustomers, type AdmissionRequest, type AdmissionRow, type DialContext } from '../../db/admission.ts';
import type { CustomerRow } from '../../db/customers.ts';
import { readinessFactsOf } from '../customer/readiness-check.ts';
import { callView } from '../call/views.ts';
import { LEASE_SECONDS } from '../call/call-keeper.ts';
import { recoverUndialled } from '../call/call-jobs.ts';
import { summaryWords } from '../call/summary-words.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { RESEARCH_RECHECK_MS, researchGate } from '../call/prospect-research.ts';
import { afterHoldRefused, decide, type Admission, type AdmissionFacts } from './admission.ts';
import { CAP_LOOKBACK_MS } from './frequency-caps.ts';
import { requiredConsent } from './consent.ts';
import { createComplianceRecordRepository, type AdmissionRecord } from '../../db/compliance-records.ts';
import { recordKeptUntil } from './record-retention.ts';
import { admissionChecks } from './admission-checks.ts';
import { countDecision } from './decision-metrics.ts';
import type { AccountMessage, AccountReplies } from '../account/messages.ts';
import type { CallMessage, CallReplies } from '../call/messages.ts';

/**
 * The dialler: claims due requests (FOR UPDATE SKIP LOCKED, so any number of diallers never dial
 * one twice), and for each loads its admission facts in one statement (db/admission.ts), asks the
 * pure rule (admission.ts: the gates, their order and the retry table) and acts on the answer:
 * end it, put it back with the time it may next try and why, or take the money start (the account
 * actor's start_call: balance, spend caps, concurrency) and hand it to a call actor.
 */

/**
 * An attempt as a customer on a test clock sees it: claimed at `clock_at` on the clock, ended as
 * long after as it did on the process clock. One made off any clock keeps its dates.
 */
function onClockTime(a: { at: Date; outcome: string | null; ended_at: Date | null; clock_at: Date | null }) {
  if (!a.clock_at) return { at: a.at, outcome: a.outcome, endedAt: a.ended_at };
  const shift = a.clock_at.getTime() - a.at.getTime();
  return { at: a.clock_at, outcome: a.outcome, endedAt: a.ended_at && new Date(a.ended_at.getTime() + shift) };
}

/** A request admitted with its hold taken, to be recorded and dialled with the round's others. */
interface Admitted {
  call: CallRow & { clock_now?: Date };
  facts: AdmissionFacts;
  from: string;
  now: Date;
  prospectNotes: string | null;
}

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
  /**
   * Requests that had taken their hold when the database refused a write (unreachable, or out of
   * resources: a full disk), before the carrier was asked: the rest of their admission (compliance
   * record, dial) is tried again each round until the database takes it. They stay claimed by this
   * process meanwhile (its keeper renews their lease); if it dies, the lease hands them on.
   */
  private readonly held = new Map<string, () => Promise<void>>();

  constructor(
    private readonly deps: Deps & {
      money: MoneyWriter;
      accounts: EntityRegistry<AccountMessage, AccountReplies, any>;
      calls: EntityRegistry<CallMessage, CallReplies, any>;
      liveCalls: Set<string>;
      /** Hands a claimed row to the call actors for the dial's load (call-actor.ts `handIn`); gives a function that takes it back. */
      handInCall?: (row: CallRow) => () => void;
    },
    private readonly options: DiallerOptions,
  ) {}

  /** Set by stop(): a stopping dialler claims nothing more, not even through tick() (a test clock's advance). */
  private stopped = false;

  start(): void {
    this.stopped = false;
    this.stopLoop = pollLoop(() => this.tick(), this.options.pollMs, this.deps.log, 'dialler');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopLoop?.();
    await this.running;
  }

  /** One round: claim what is due and admit each request. Returns how many were dialled. */
  tick(): Promise<number> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<number> {
    if (this.stopped) return 0;
    const { pool, clock } = this.deps;
    for (const id of this.stranded) {
      await this.putBack(id);
      this.stranded.delete(id);
    }
    for (const [id, resume] of this.held) {
      try {
        await resume();
        this.held.delete(id);
      } catch (err) {
        if (isDatabaseUnreachable(err)) throw err;
        this.held.delete(id);
        this.deps.log.error({ err, call_id: id }, 'a request held through a database outage is not dialled after all; it is recovered (queued again or closed, nothing charged)');
        await this.putBack(id).catch(() => this.stranded.add(id));
      }
    }
    const free = Math.max(0, this.options.maxCalls - this.deps.liveCalls.size);
    const limit = Math.max(1, Math.min(this.options.batch, free || 1));
    const calls = createCallRepository(pool);
    const claimed: (CallRow & { clock_now?: Date })[] = await calls.claimDue(clock.now(), limit, this.id, LEASE_SECONDS);
    // Requests of customers on a test clock are due on its time (migration 028), claimed apart.
    if (claimed.length < limit) claimed.push(...(await calls.claimDueOnClocks(clock.now(), limit - claimed.length, this.id, LEASE_SECONDS)));
    // One statement reads every claimed request's admission facts (one snapshot for the round);
    // then the requests are admitted side by side, each decided on its own facts; what must be
    // serial (an account's money) is serialised by its row lock in PostgreSQL.
    let unreachable: unknown;
    let facts: AdmissionRow[] | undefined;
    let factsFailed: unknown;
    try {
      facts = await loadAdmissionFactsOfMany(pool, claimed.map((call) => this.admissionRequest(call)), clock.now());
    } catch (err) {
      factsFailed = err;
    }
    const failed = async (call: CallRow, err: unknown) => {
      // The database going away mid-round is the poll loop's to report, once per outage.
      if (isDatabaseUnreachable(err)) unreachable ??= err;
      // Its hold is taken and the carrier not asked: it is dialled when the database is back.
      if (this.held.has(call.id)) return false;
      if (!isDatabaseUnreachable(err)) this.deps.log.error({ err, call_id: call.id }, 'admitting a request failed; it goes back to the queue');
      await this.putBack(call.id).catch(() => this.stranded.add(call.id));
      return false;
    };
    // Each request decided and, when admitted, its hold taken; then the round's compliance records
    // in one statement and its customers read once, and the call actors dial.
    const admitted = await Promise.all(
      claimed.map(async (call, i) => {
        try {
          if (!facts) throw factsFailed;
          return await this.admit(call, facts[i]);
        } catch (err) {
          await failed(call, err);
          return null;
        }
      }),
    );
    const toDial = await this.startAll(
      admitted.filter((a): a is Admitted => a !== null),
      failed,
    );
    if (toDial.length === 0) {
      if (unreachable) throw unreachable;
      return 0;
    }
    // One statement for the round's compliance records; if it fails, each dial writes its own
    // (recordAdmission, ON CONFLICT DO NOTHING) and meets the failure itself.
    const recorded = await createComplianceRecordRepository(pool)
      .recordAdmissions(toDial.map((a) => this.admissionRecord(a.call, a.facts, a.from, a.now)))
      .then(
        () => true,
        () => false,
      );
    // The customers the dials read (and their calling language), once for the round.
    const customers = await loadDialCustomers(pool, toDial.map((a) => a.call.customer_id)).catch(() => new Map<string, { customer: CustomerRow; language: string }>());
    const results = await Promise.all(
      toDial.map(async (a) => {
        try {
          const customer = customers.get(a.call.customer_id);
          const context: DialContext | undefined = customer && { ...customer, prospectNotes: a.prospectNotes };
          await this.dial(a.call, a.facts, a.from, a.now, { recorded, context });
          countDecision('dial', 'dialled');
          return true;
        } catch (err) {
          return failed(a.call, err);
        }
      }),
    );
    if (unreachable) throw unreachable;
    return results.filter(Boolean).length;
  }

  /**
   * What a claimed request's admission facts are read for. A request of a customer on a test clock
   * is judged on the clock's time: every attempt to the number is read (its look-back is on the
   * process clock's dates) and those claimed on a clock are moved onto it (`onClockTime`).
   * Readiness is the customer's set-up and the world's registries, not a schedule: it is read on
   * the process clock.
   */
  private admissionRequest(call: CallRow & { clock_now?: Date }): AdmissionRequest {
    const now = call.clock_now ?? this.deps.clock.now();
    const attemptsSince = call.clock_now ? new Date(0) : new Date(now.getTime() - CAP_LOOKBACK_MS);
    return { accountId: call.account_id, customerId: call.customer_id, toE164: call.to_e164, attemptsSince, requestId: call.id, researchOf: call.request_id ?? call.id };
  }

  /**
   * Decides on the request's admission facts (`row`, read for the round) and acts. True when it
   * was dialled. A request of a customer on a test clock is decided at the clock's time
   * (`clock_now`): its calling window, frequency caps, deadline and the time it next tries; what it
   * writes stays dated on the process clock.
   */
  private async admit(call: CallRow & { clock_now?: Date }, row: AdmissionRow): Promise<Admitted | null> {
    const { pool, clock } = this.deps;
    const now = call.clock_now ?? clock.now();
    const readinessNow = clock.now();
    const facts: AdmissionFacts = {
      dialBefore: call.dial_before,
      to: call.to_e164,
      toCountry: call.to_country,
      emergencyClosures: new Set(row.emergency_closures),
      doNotCall: row.do_not_call,
      readiness: row.readiness && readinessFactsOf(row.readiness, readinessNow),
      callerId: row.caller_id,
      attempts: row.attempts.map((a) => (call.clock_now ? onClockTime(a) : { at: a.at, outcome: a.outcome, endedAt: a.ended_at })),
      consent: { held: call.consent_type, expiresAt: call.consent_expires_at, lineType: call.line_type as AdmissionFacts['consent']['lineType'] },
      earlierOutcomes: row.earlier_outcomes,
    };
    const decision = decide(facts, now, { liveCalls: this.deps.liveCalls.size, maxCalls: this.options.maxCalls });
    // A request whose research of the called business is still running waits for it, a bounded time (prospect-research.ts).
    // Only a request whose research was pending when the round read its facts can wait (research only ends).
    if (decision.kind === 'dial' && row.research_pending && (await researchGate(pool, call.id, clock.now())) === 'wait') {
      // Looked at again on the request's own time (a test clock's, when it is on one).
      await createCallRepository(pool).requeue(call.id, new Date(now.getTime() + RESEARCH_RECHECK_MS), 'researching', clock.now());
      countDecision('wait', 'researching');
      return null;
    }
    switch (decision.kind) {
      case 'end':
        await this.end(call, decision.status, decision.outcome);
        countDecision('end', decision.outcome);
        return null;
      case 'wait':
        await this.wait(call, decision, now);
        countDecision('wait', decision.reason);
        return null;
      case 'dial':
        // Its money start is taken with the round's other starts of its account (`startAll`).
        return { call, facts, from: decision.from, now, prospectNotes: row.prospect_notes };
      default: {
        const unhandled: never = decision;
        throw new Error(`unhandled admission ${(unhandled as Admission).kind}`);
      }
    }
  }

  /**
   * The money starts of the round's admitted requests: one batch per account and mode
   * (`startCalls`: balance, spend caps, concurrency, as if each asked alone in the round's order).
   * A refused start waits as its reason says; a start that failed is the request's failure. The
   * requests whose hold was taken, in order.
   */
  private async startAll(admitted: Admitted[], failed: (call: CallRow, err: unknown) => Promise<boolean>): Promise<Admitted[]> {
    const groups = new Map<string, Admitted[]>();
    for (const a of admitted) {
      const key = `${a.call.account_id}|${a.call.mode}`;
      groups.set(key, [...(groups.get(key) ?? []), a]);
    }
    const started = new Set<Admitted>();
    await Promise.all(
      [...groups.values()].map(async (group) => {
        let results: PromiseSettledResult<StartCallResult>[];
        try {
          results = await this.deps.money.startCalls(this.deps.pool, {
            accountId: group[0].call.account_id,
            mode: group[0].call.mode,
            now: this.deps.clock.now(),
            calls: group.map((a) => ({ customerId: a.call.customer_id, reference: a.call.id, ...(a.call.clock_now ? { scheduleNow: a.call.clock_now } : {}) })),
          });
        } catch (err) {
          results = group.map(() => ({ status: 'rejected', reason: err }));
        }
        await Promise.all(
          group.map(async (a, i) => {
            const r = results[i];
            try {
              if (r.status === 'rejected') throw r.reason;
              if (r.value.ok) return void started.add(a);
              await this.wait(a.call, afterHoldRefused(r.value.reason, a.now, a.call.dial_before), a.now);
              countDecision('wait', r.value.reason);
            } catch (err) {
              await failed(a.call, err);
            }
          }),
        );
      }),
    );
    return admitted.filter((a) => started.has(a));
  }

  /**
   * The rest of an admitted request's way, once its hold is taken: its compliance record, then the
   * call actor dials. The database refusing either (it went away, its disk is full) leaves the
   * request held for the next rounds (`held`), never closed as lost: the carrier was not asked (a
   * call the carrier placed is the call actor's to record, call-actor.ts).
   */
  private async dial(call: CallRow, facts: AdmissionFacts, from: string, now: Date, round?: { recorded: boolean; context?: DialContext }): Promise<void> {
    try {
      // Written for the whole round already, or here alone.
      if (!round?.recorded) await this.recordAdmission(call, facts, from, now);
      const takeBack = round ? this.deps.handInCall?.(call) : undefined;
      try {
        await this.deps.calls.ask(call.id, { type: 'dial', from, ...(round?.context ? { context: round.context } : {}) });
      } finally {
        takeBack?.();
      }
    } catch (err) {
      if (isDatabaseUnreachable(err)) this.held.set(call.id, () => this.resume(call, facts, from, now));
      throw err;
    }
  }

  /**
   * A held request, tried again: dialled only if the gates that move with time (calling window,
   * deadline) still let it through now; otherwise it fails here and is recovered as a request
   * whose process died while dialling is (nothing charged).
   */
  private async resume(call: CallRow & { clock_now?: Date }, facts: AdmissionFacts, from: string, admittedAt: Date): Promise<void> {
    const again = decide(facts, call.clock_now ?? this.deps.clock.now(), { liveCalls: 0, maxCalls: Number.POSITIVE_INFINITY });
    if (again.kind !== 'dial') throw new Error(`after the database outage the request may no longer be dialled (${again.kind})`);
    await this.dial(call, facts, from, admittedAt);
    countDecision('dial', 'dialled');
  }

  /** The call's compliance record: the consent and the rule it is dialled on, and what the other gates read, as decided at `now`. */
  private async recordAdmission(call: CallRow, facts: AdmissionFacts, from: string, now: Date): Promise<void> {
    await createComplianceRecordRepository(this.deps.pool).recordAdmission(this.admissionRecord(call, facts, from, now));
  }

  private admissionRecord(call: CallRow, facts: AdmissionFacts, from: string, now: Date): AdmissionRecord {
    const lineType = facts.consent.lineType ?? 'unknown';
    const requirement = requiredConsent(call.to_e164, call.to_country, lineType, now);
    return {
      callId: call.id,
      consent: call,
      lineType,
      requiredConsent: requirement.required,
      rules: requirement.rules,
      citations: requirement.citations,
      admittedAt: now,
      keepUntil: recordKeptUntil(call.to_country, now),
      checks: { ...admissionChecks(facts, from, now) },
      country: call.to_country,
    };
  }

  /**
   * A request whose admission failed: back to the queue in a minute, or, if it had already taken
   * its hold (it was being dialled), closed as lost with nothing charged rather than risk calling
   * twice (call-jobs.ts `recoverUndialled`).
   */
  private async putBack(id: string): Promise<void> {
    const now = this.deps.clock.now();
    await recoverUndialled(this.deps, id, now, this.deps.config.publicUrl, { at: new Date(now.getTime() + 60_000), reason: 'not_ready' });
  }

  private async wait(call: CallRow, w: Admission & { kind: 'wait' }, now: Date): Promise<void> {
    if (w.logRefusal) {
      await this.deps.money.recordRefusedStart(this.deps.pool, {
        accountId: call.account_id,
        mode: call.mode,
        customerId: call.customer_id,
        reason: w.reason,
        reference: call.id,
        now,
      });
    }
    await createCallRepository(this.deps.pool).requeue(call.id, w.until, w.reason, this.deps.clock.now(), w.detail ?? null);
  }

  /** Ends a request that will never be dialled, with its reason, and tells the reseller. */
  private async end(call: CallRow, status: 'expired' | 'blocked', outcome: (Admission & { kind: 'end' })['outcome']): Promise<void> {
    const now = this.deps.clock.now();
    await withTransaction(this.deps.pool, async (client) => {
      // In the customer's calling language (actors/call/summary-words.ts).
      const summary = summaryWords(await createCoverageRepository(client).callingLanguageOf(call.customer_id)).ended[outcome];
      const row = await createCallRepository(client).update(call.id, { status, outcome, summary, ended_at: now, updated_at: now, claimed_at: null, claimed_by: null });
      await recordEvent(client, { accountId: call.account_id, mode: call.mode, type: 'call.completed', data: callView(row, this.deps.config.publicUrl), now });
    });
  }
}
