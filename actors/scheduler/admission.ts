import { assessReadiness, type BlockerCode, type ReadinessFacts } from '../customer/readiness.ts';
import { emergencyClosure, isOpen, nextOpening } from './calling-windows.ts';
import { checkCaps, type PastAttempt } from './frequency-caps.ts';
import { consentExpired, consentMeets, noRedialRule, requiredConsent, type ConsentType, type LineType } from './consent.ts';

/**
 * Admission: whether a claimed request is dialled now, waits, or ends. Pure: the dialler loads the
 * facts in one statement (db/admission.ts), asks `decide`, then acts on the answer. No gate can
 * be skipped by a parameter: a request carries only who and whom to call.
 *
 * Gates, in order: the request's deadline; do-not-call (the account's list and national
 * registries); the consent the call needs (consent.ts; ends the request `consent_expired`,
 * `consent_required` or `requested_call_only`); no redial after the callee hung up (Nevada; ends it
 * `no_redial_after_hang_up`); customer readiness (the question of the customer's mode: a test customer's calls
 * leave out the four live-money gates); the call-frequency caps of the called number's
 * jurisdiction (frequency-caps.ts), waiting until they free it; the calling window of the called
 * number (first whether an operator has closed a jurisdiction it may be in, La. R.S. 45:844.31's
 * state of emergency); this process's capacity; the caller ID. A request that passes them all goes on to the account's money start
 * (balance, spend caps, concurrency), whose refusals `afterHoldRefused` maps. A request that may
 * not be dialled yet waits with the reason and the time it may next try, never past its
 * deadline; it is never ended for a transient reason.
 */

/** How long to wait before trying again, by reason, ms. Windows wait for their next opening instead. */
export const RETRY_MS: Readonly<Record<string, number>> = {
  concurrency_limit: 15_000,
  platform_at_capacity: 10_000,
  insufficient_balance: 10 * 60_000,
  spend_cap_daily: 30 * 60_000,
  spend_cap_monthly: 6 * 3600_000,
  customer_spend_cap_daily: 30 * 60_000,
  customer_spend_cap_monthly: 6 * 3600_000,
  not_ready: 10 * 60_000,
  no_caller_id: 10 * 60_000,
  // An emergency lasts days; a quarter of an hour is soon enough to notice it was lifted.
  emergency_closure: 15 * 60_000,
};

/** The wait after a money refusal whose reason has no entry of its own, ms. */
export const DEFAULT_RETRY_MS = 60_000;

/** What a request is decided on besides `now` and the capacity. */
export interface AdmissionFacts {
  /** The request's deadline: it is never dialled at or after it. */
  dialBefore: Date;
  /** The called number (E.164) and its country: the calling window's inputs. */
  to: string;
  toCountry: string;
  /** Jurisdictions an operator has closed to calling (calling-windows.ts EMERGENCY_JURISDICTIONS codes). */
  emergencyClosures: ReadonlySet<string>;
  /** Why the number may not be dialled for the account; null if it may. */
  doNotCall: 'account_list' | 'national_registry' | null;
  /** The customer's readiness facts; null when the customer is gone. */
  readiness: ReadinessFacts | null;
  /** The customer's active number in its own country; null when it has none. */
  callerId: string | null;
  /** The customer's earlier dial attempts to `to`, as far back as the caps look (CAP_LOOKBACK_MS). */
  attempts: readonly PastAttempt[];
  /**
   * The consent carried with the request and the line type it was admitted on (null for a request
   * older than the consent gate: read as `unknown`, i.e. mobile). The rule is asked again at the
   * dial: consent may have expired, or a rule come into force, since the POST.
   */
  consent: { held: ConsentType; expiresAt: Date | null; lineType: LineType | null };
  /**
   * The outcomes of every earlier call of the customer to `to`, however long ago (NRS
   * 597.814(2)(b) has no time limit): a callee who hung up is not called again (consent.ts
   * `noRedialRule`).
   */
  earlierOutcomes: readonly (string | null)[];
}

/** This process's calls: running now, and the most it runs at once. */
export interface Capacity {
  liveCalls: number;
  maxCalls: number;
}

/** Why a request waits: a readiness blocker, a frequency cap, an emergency closure, the calling window, capacity, caller ID or a money refusal. */
export type WaitReason = BlockerCode | 'not_ready' | 'frequency_cap' | 'emergency_closure' | 'outside_calling_window' | 'platform_at_capacity' | 'no_number_in_country' | (string & {});

export type Admission =
  /** Every gate passed: start the money (the account's `start_call`), then dial from `from`. */
  | { kind: 'dial'; from: string }
  /**
   * Back to the queue until `until` (never past the deadline), saying why. `logRefusal`: the
   * refusal also goes into the account's activity log, as the account's own money refusals do.
   */
  | { kind: 'wait'; reason: WaitReason; until: Date; logRefusal: boolean; detail?: string }
  /** Never to be dialled: closed with this status and outcome. */
  | { kind: 'end'; status: 'expired'; outcome: 'expired' }
  | { kind: 'end'; status: 'blocked'; outcome: 'do_not_call_listed' | 'consent_expired' | 'consent_required' | 'requested_call_only' | 'no_redial_after_hang_up' }
  /** Ended by the call actor at its dial, not by `decide`: a UK opening with neither the address nor a freephone caller ID (PECR reg. 24). */
  | { kind: 'end'; status: 'blocked'; outcome: 'registered_address_required' };

/** The gates before the money start, in order. Throws only if the number has no window within a month (calling-windows.ts). */
export function decide(facts: AdmissionFacts, now: Date, capacity: Capacity): Admission {
  if (facts.dialBefore <= now) return { kind: 'end', status: 'expired', outcome: 'expired' };
  if (facts.doNotCall) return { kind: 'end', status: 'blocked', outcome: 'do_not_call_listed' };
  const consent = consentGate(facts, now);
  if (consent) return { kind: 'end', status: 'blocked', outcome: consent };
  if (noRedialRule(facts.to, facts.toCountry, facts.earlierOutcomes)) return { kind: 'end', status: 'blocked', outcome: 'no_redial_after_hang_up' };
  const readiness = facts.readiness ? assessReadiness(facts.readiness) : null;
  if (!readiness?.ready) {
    // The blocker's words go with its code: for a stale registry, which one and since when.
    const blocker = readiness?.blockers[0];
    return { ...wait(facts, blocker?.code ?? 'not_ready', after(now, RETRY_MS.not_ready)), ...(blocker ? { detail: blocker.message } : {}) };
  }
  // Before the window: a cap that frees in weeks should not wake the request at every opening.
  const caps = checkCaps(facts.to, facts.toCountry, facts.attempts, now);
  if (!caps.allowed) return wait(facts, 'frequency_cap', caps.until);
  if (emergencyClosure(facts.to, facts.toCountry, facts.emergencyClosures)) return wait(facts, 'emergency_closure', after(now, RETRY_MS.emergency_closure));
  if (!isOpen(facts.to, facts.toCountry, now)) return wait(facts, 'outside_calling_window', nextOpening(facts.to, facts.toCountry, now));
  if (capacity.liveCalls >= capacity.maxCalls) return wait(facts, 'platform_at_capacity', after(now, RETRY_MS.platform_at_capacity), true);
  if (!facts.callerId) return wait(facts, 'no_number_in_country', after(now, RETRY_MS.no_caller_id));
  return { kind: 'dial', from: facts.callerId };
}

/** Why the consent held no longer allows the call at `now`, or null when it does. */
function consentGate(facts: AdmissionFacts, now: Date): 'consent_expired' | 'consent_required' | 'requested_call_only' | null {
  const lineType = facts.consent.lineType ?? 'unknown';
  const requirement = requiredConsent(facts.to, facts.toCountry, lineType, now);
  if (consentMeets(facts.consent.held, requirement)) {
    return consentExpired(facts.consent.expiresAt, now) && !consentMeets('none', requirement) ? 'consent_expired' : null;
  }
  return requirement.required === 'requested_call' ? 'requested_call_only' : 'consent_required';
}

/**
 * The wait after the account refused the money start (`reason`: a hold-rules.ts refusal), at
 * `now`, for a request due before `dialBefore`. The account logs its own refusals.
 */
export function afterHoldRefused(reason: string, now: Date, dialBefore: Date): Admission & { kind: 'wait' } {
  return wait({ dialBefore }, reason, after(now, Object.hasOwn(RETRY_MS, reason) ? RETRY_MS[reason] : DEFAULT_RETRY_MS));
}

const after = (now: Date, ms: number): Date => new Date(now.getTime() + ms);

function wait(facts: Pick<AdmissionFacts, 'dialBefore'>, reason: WaitReason, at: Date, logRefusal = false): Admission & { kind: 'wait' } {
  // Never wait past the deadline: the request expires then instead.
  return { kind: 'wait', reason, until: at < facts.dialBefore ? at : facts.dialBefore, logRefusal };
}
