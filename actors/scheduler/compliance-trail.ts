import type { CallRow } from '../../db/calls.ts';
import type { ProducedRecordRow, RegistryAtDial } from '../../db/compliance-records.ts';
import type { RefusedStartRow } from '../../db/console-calls.ts';
import type { HoldRow } from '../../db/money/holds.ts';
import type { AdmissionChecks } from './admission-checks.ts';
import { BLOCKER_CODES } from '../customer/readiness.ts';
import { iso } from '../../runtime/types.ts';
import { callingRules, windowExplanation } from './calling-windows.ts';
import { openingAsPlayed } from '../call/opening.ts';
import { SUMMARY_WORDS, type EndedOutcome } from '../call/summary-words.ts';

/**
 * A call's compliance trail for the console (issue 21): every gate its request met, when, on
 * what data, in words, ordered by time. One source: the call's compliance record (the same row
 * GET /v1/calls/{id}/compliance_record produces, with what the gates read at the dial, migration
 * 030), the request itself, its refused starts in the activity log and its hold. A start that was
 * refused, and a request ended or waiting at a gate, show that gate as failed. Pure.
 */

export type TrailGate =
  | 'request'
  | 'deadline'
  | 'do_not_call'
  | 'consent'
  | 'no_redial'
  | 'readiness'
  | 'frequency_caps'
  | 'emergency_closure'
  | 'calling_window'
  | 'capacity'
  | 'caller_id'
  | 'hold'
  | 'identification';

export interface TrailEntry {
  gate: TrailGate;
  passed: boolean;
  at: string;
  detail: string;
}

export interface TrailFacts {
  call: CallRow;
  /** The compliance record with its request (null fields before the dial). */
  record: ProducedRecordRow;
  refusedStarts: readonly RefusedStartRow[];
  hold: HoldRow | null;
}

const CONSENT_WORDS: Record<string, string> = {
  requested_call: 'the called party asked for the call (requested_call)',
  prior_express_written: 'prior express written consent',
  prior_express: 'prior express consent',
  existing_business_relationship: 'an existing business relationship',
  none: 'no consent',
};

const LINE_WORDS: Record<string, string> = {
  mobile: 'a mobile line',
  landline: 'a residential landline',
  business_landline: 'a business landline',
  voip: 'a VoIP line',
  unknown: 'a line of unknown type (read as mobile)',
};

/** Money refusals of the call start (hold-rules.ts reasons), by gate and in words. */
const MONEY_REFUSALS: Record<string, { gate: TrailGate; words: string }> = {
  insufficient_balance: { gate: 'hold', words: 'the balance could not cover the hold of the longest call (insufficient_balance)' },
  spend_cap_daily: { gate: 'hold', words: "the account's daily spend cap would have been passed (spend_cap_daily)" },
  spend_cap_monthly: { gate: 'hold', words: "the account's monthly spend cap would have been passed (spend_cap_monthly)" },
  customer_spend_cap_daily: { gate: 'hold', words: "the customer's daily spend cap would have been passed (customer_spend_cap_daily)" },
  customer_spend_cap_monthly: { gate: 'hold', words: "the customer's monthly spend cap would have been passed (customer_spend_cap_monthly)" },
  concurrency_limit: { gate: 'hold', words: 'the customer or the account already ran as many calls as allowed at once (concurrency_limit)' },
  platform_at_capacity: { gate: 'capacity', words: 'the service was running as many calls as it can (platform_at_capacity); nothing was lost' },
};

/** The gate a request waiting for `reason` (its waiting_reason) is held at. */
function waitingGate(reason: string): TrailGate {
  if (reason in MONEY_REFUSALS) return MONEY_REFUSALS[reason].gate;
  switch (reason) {
    case 'outside_calling_window':
      return 'calling_window';
    case 'frequency_cap':
      return 'frequency_caps';
    case 'emergency_closure':
      return 'emergency_closure';
    case 'no_number_in_country':
      return 'caller_id';
    default:
      return 'readiness';
  }
}

/** Why a request waits, in words, when the request has no words of its own for it (waiting_detail). */
function waitingWords(reason: string): string {
  if (reason in MONEY_REFUSALS) return MONEY_REFUSALS[reason].words;
  if ((BLOCKER_CODES as readonly string[]).includes(reason) || reason === 'not_ready') return `the customer is not ready for calls (${reason})`;
  switch (reason) {
    case 'outside_calling_window':
      return "the number's calling window is closed (outside_calling_window)";
    case 'frequency_cap':
      return 'a call-frequency cap holds the number (frequency_cap)';
    case 'emergency_closure':
      return 'a jurisdiction the number may be in is closed by a state of emergency (emergency_closure)';
    case 'no_number_in_country':
      return "the customer has no working number in the called number's country (no_number_in_country)";
    default:
      return reason;
  }
}

/** Why the window was closed then, in words; a policy window's citation (it names the platform) said for what it is. */
function closedWindowWords(e164: string, country: string, at: Date): string {
  let words = windowExplanation(e164, country, at);
  for (const rule of callingRules(e164, country)) if (rule.basis === 'policy') words = words.replaceAll(rule.citation, "the service's own hours: no law sets calling hours there");
  return words;
}

/** The gate of a request ended before any dial, by its outcome (its words: actors/call/summary-words.ts `ended`). */
const ENDED_AT_GATE: Record<string, TrailGate> = {
  expired: 'deadline',
  do_not_call_listed: 'do_not_call',
  consent_expired: 'consent',
  consent_required: 'consent',
  requested_call_only: 'consent',
  no_redial_after_hang_up: 'no_redial',
  registered_address_required: 'identification',
};

const dollars = (cents: number): string => `$${(cents / 100).toFixed(2)}`;

function registriesWords(registries: readonly RegistryAtDial[] | undefined, country: string): string {
  if (!registries || registries.length === 0) return `no national registry is kept for ${country}`;
  return `not on ${registries.map((r) => `${r.registry} (loaded ${new Date(r.imported_at).toISOString()}, ${r.numbers} number${r.numbers === 1 ? '' : 's'}, from ${r.source})`).join(', ')}`;
}

function consentHeld(r: ProducedRecordRow): string {
  const type = r.consent_type ?? 'none';
  if (type === 'none') return 'no consent was sent';
  const expires = r.consent_expires_at ? `, valid until ${r.consent_expires_at.toISOString()}` : '';
  return `${CONSENT_WORDS[type] ?? type}, obtained ${iso(r.consent_obtained_at)} (${r.consent_source}; evidence ${r.consent_evidence_ref}${expires})`;
}

/** The gates checked at the dial, in the dialler's order (admission.ts `decide`), from the record. */
function admissionEntries(r: ProducedRecordRow, mode: string): TrailEntry[] {
  const at = r.admitted_at!.toISOString();
  const checks = r.checks as (Partial<AdmissionChecks> & { dnc_registries?: RegistryAtDial[] }) | null;
  const notKept = 'Checked at the dial; what it read was not kept for calls dialled before the trail was recorded.';
  const entry = (gate: TrailGate, detail: string): TrailEntry => ({ gate, passed: true, at, detail });
  const rules = (r.rules ?? []).length > 0 ? `under ${(r.rules ?? []).join(', ')} (${(r.citations ?? []).join('; ')})` : 'no consent rule reaches this number';
  const out: TrailEntry[] = [
    entry('deadline', `Dialled before the request's deadline.`),
    entry(
      'do_not_call',
      checks
        ? `The number ${r.to_e164} is not on the account's do-not-call list, and ${registriesWords(checks.dnc_registries, r.to_country)}.`
        : `The number ${r.to_e164} is on neither the account's do-not-call list nor a national registry. ${notKept}`,
    ),
    entry(
      'consent',
      `Held: ${consentHeld(r)}. Needed for ${LINE_WORDS[r.line_type ?? 'unknown'] ?? r.line_type}: ${CONSENT_WORDS[r.required_consent ?? 'none'] ?? r.required_consent}, ${rules}.`,
    ),
    entry('no_redial', 'No earlier call of the customer to the number ended in a way its law forbids calling again after.'),
    entry('readiness', `The customer was ready for ${mode} calls: every readiness check passed.`),
  ];
  if (!checks?.calling_window || !checks.frequency_caps || !checks.emergency_closures) {
    out.push(entry('frequency_caps', notKept), entry('calling_window', notKept));
    return out;
  }
  const caps = checks.frequency_caps;
  out.push(
    entry(
      'frequency_caps',
      caps.rules.length === 0
        ? 'No call-frequency cap reaches this number.'
        : `Under ${caps.rules.map((c) => `${c.id} (${c.citation})`).join(', ')}: ${caps.attempts_counted} earlier dial attempt(s) to the number in the last ${caps.lookback_days} days, within the caps.`,
    ),
    entry('emergency_closure', `No emergency closure of ${checks.emergency_closures.jurisdictions.join(', ')}.`),
    entry(
      'calling_window',
      `Open in ${checks.calling_window.jurisdictions.join(', ')}: local time ${checks.calling_window.local_times.map((l) => `${l.local_time} (${l.zone})`).join(', ')}, inside ` +
        // A policy window's citation names the platform: a white-label page says what it is instead.
        `${checks.calling_window.rules.map((w) => (w.basis === 'law' ? `${w.id} (${w.citation}; the law)` : `${w.id} (the service's own hours: no law sets calling hours there)`)).join(' and ')}.`,
    ),
  );
  if (checks.caller_id) out.push(entry('caller_id', `Called from ${checks.caller_id}, the customer's number in ${r.to_country}.`));
  return out;
}

function holdEntry(h: HoldRow): TrailEntry {
  const end =
    h.status === 'settled'
      ? `settled ${iso(h.resolved_at)}: ${dollars(h.charged_cents ?? 0)} charged, the rest released`
      : h.status === 'released'
        ? `released ${iso(h.resolved_at)} with nothing charged`
        : `still held, until ${h.expires_at.toISOString()} at the latest`;
  return { gate: 'hold', passed: true, at: h.created_at.toISOString(), detail: `${dollars(h.amount_cents)} held for the longest call (${h.mode} mode); ${end}.` };
}

/** The trail of one call, ordered by time (gates of one instant in the order they are checked). */
export function complianceTrail(f: TrailFacts): TrailEntry[] {
  const { call, record: r } = f;
  const entries: TrailEntry[] = [
    {
      gate: 'request',
      passed: true,
      at: call.created_at.toISOString(),
      detail:
        `Requested for ${call.to_e164} (${call.to_country}${call.line_type ? `, ${LINE_WORDS[call.line_type] ?? call.line_type}` : ''}) with ` +
        `${CONSENT_WORDS[call.consent_type] ?? call.consent_type}; the consent was checked against the number's rules when the request was made.`,
    },
  ];
  for (const refused of f.refusedStarts) {
    const known = MONEY_REFUSALS[refused.reason ?? ''];
    const hold = refused.detail?.hold_cents !== undefined ? ` The hold asked for was ${dollars(refused.detail.hold_cents)}.` : '';
    entries.push({
      gate: known?.gate ?? 'hold',
      passed: false,
      at: refused.created_at.toISOString(),
      detail: `The call start was refused: ${known?.words ?? refused.reason}. The request waited and was tried again.${hold}`,
    });
  }
  if (r.admitted_at) entries.push(...admissionEntries(r, call.mode));
  if (f.hold) entries.push(holdEntry(f.hold));
  if (r.identified_at) {
    entries.push({
      gate: 'identification',
      passed: true,
      at: r.identified_at.toISOString(),
      // What the callee heard (issue 23: a machine, a fax or a 9 may cut the opening short).
      detail: `The agent opened with: "${openingAsPlayed(r.opening, r.identification) ?? ''}"${r.opt_out_offered ? ', offering the opt-out' : ''}.`,
    });
  }
  // Admitted, then stopped right before the dial (the number listed meanwhile, or an opening that could not be said lawfully).
  const beforeDial = (r.checks as { before_dial?: { checked_at: string; outcome: string } } | null)?.before_dial;
  if (r.admitted_at && beforeDial) {
    const english = beforeDial.outcome in ENDED_AT_GATE ? SUMMARY_WORDS.en.ended[beforeDial.outcome as EndedOutcome] : `Ended ${beforeDial.outcome}.`;
    entries.push({ gate: ENDED_AT_GATE[beforeDial.outcome] ?? 'readiness', passed: false, at: beforeDial.checked_at, detail: `Checked again right before the dial: ${english.replace(/^./, (c) => c.toLowerCase())}` });
  }
  if (!r.admitted_at && (call.status === 'blocked' || call.status === 'expired')) {
    const gate = ENDED_AT_GATE[call.outcome ?? ''] ?? 'readiness';
    // The trail is English: the summary's English words, not the customer's calling language the summary is in.
    const english = call.outcome && call.outcome in ENDED_AT_GATE ? SUMMARY_WORDS.en.ended[call.outcome as EndedOutcome] : null;
    entries.push({ gate, passed: false, at: (call.ended_at ?? call.updated_at).toISOString(), detail: english ?? call.summary ?? `Ended ${call.outcome}.` });
  }
  const lastRefusal = f.refusedStarts.at(-1);
  // A retry waiting for its planned time (retries.ts) is held by no gate yet.
  if (call.status === 'queued' && call.waiting_reason && call.waiting_reason !== 'retry_scheduled' && lastRefusal?.reason !== call.waiting_reason) {
    const reason = call.waiting_reason;
    entries.push({
      gate: waitingGate(reason),
      passed: false,
      at: call.updated_at.toISOString(),
      detail: `Waiting: ${(call.waiting_detail ?? waitingWords(reason)).replace(/\.$/, '')}. Tried again at ${call.next_attempt_at.toISOString()}.${reason === 'outside_calling_window' ? ` ${closedWindowWords(call.to_e164, call.to_country, call.updated_at)}` : ''}`,
    });
  }
  // Stable: gates of one instant keep the order they were checked in.
  return entries.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}
