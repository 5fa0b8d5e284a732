import test from 'ava';
import { complianceTrail, type TrailFacts } from '../../actors/scheduler/compliance-trail.ts';
import { admissionChecks } from '../../actors/scheduler/admission-checks.ts';
import type { AdmissionFacts } from '../../actors/scheduler/admission.ts';
import type { CallRow } from '../../db/calls.ts';
import type { ProducedRecordRow } from '../../db/compliance-records.ts';
import type { HoldRow } from '../../db/money/holds.ts';
import { readyFacts } from '../helpers/readiness-facts.ts';

/*
 * The console's compliance trail (issue 21), pure: each gate once, ordered by time, the failed
 * gate of a request stopped before its dial, and what the gates read at the dial, in words.
 */

const at = (iso: string) => new Date(iso);
/** Miami (Florida: a frequency cap and a state window), Tuesday 15 June 2027, 11:00 there. */
const MIAMI = '+13055550123';
const REQUESTED = at('2027-06-15T14:00:00Z');
const DIALLED = at('2027-06-15T15:00:00Z');

function call(overrides: Partial<CallRow> = {}): CallRow {
  return {
    id: '7d1c1b8e-0000-4000-8000-000000000001', seq: 1, account_id: 'a', mode: 'test', customer_id: 'c', to_e164: MIAMI, to_country: 'US', phone_input: MIAMI,
    business_name: null, external_ref: null, status: 'completed', outcome: 'completed', dial_before: at('2027-06-22T14:00:00Z'), next_attempt_at: DIALLED,
    attempts: 1, waiting_reason: null, waiting_detail: null, claimed_at: DIALLED, claimed_by: null, carrier: 'simulated', carrier_call_id: null, from_e164: null,
    answered_by: null, dialed_at: DIALLED, answered_at: null, ended_at: at('2027-06-15T15:03:00Z'), duration_seconds: 180, summary: null, end_reason: null,
    appointment_id: null, transcript: [], recording_id: null, recording_url: null, recording_seconds: null, lease_expires_at: null, completion_event_due_at: null,
    consent_type: 'prior_express_written', consent_obtained_at: at('2027-06-01T10:00:00Z'), consent_source: 'form', consent_evidence_ref: 'ev-1', consent_expires_at: null,
    line_type: 'mobile', request_id: '7d1c1b8e-0000-4000-8000-000000000001', attempt: 1, retry_at: null, direction: 'outbound', inbound_action: null, created_at: REQUESTED, updated_at: DIALLED, ...overrides,
  };
}

const FACTS: AdmissionFacts = {
  dialBefore: at('2027-06-22T14:00:00Z'), to: MIAMI, toCountry: 'US', emergencyClosures: new Set(), doNotCall: null, readiness: readyFacts(), callerId: '+13055550100',
  attempts: [{ at: at('2027-06-15T12:00:00Z'), outcome: 'no_answer', endedAt: at('2027-06-15T12:00:30Z') }], consent: { held: 'prior_express_written', expiresAt: null, lineType: 'mobile' }, earlierOutcomes: ['no_answer'],
};

function record(overrides: Partial<ProducedRecordRow> = {}): ProducedRecordRow {
  const c = call();
  return {
    call_id: c.id, account_id: 'a', customer_id: 'c', mode: 'test', to_e164: MIAMI, to_country: 'US', external_ref: null, requested_at: REQUESTED,
    request_consent_type: 'prior_express_written', request_consent_obtained_at: c.consent_obtained_at, request_consent_source: 'form', request_consent_evidence_ref: 'ev-1', request_consent_expires_at: null,
    admitted_at: DIALLED, consent_type: 'prior_express_written', consent_obtained_at: c.consent_obtained_at, consent_source: 'form', consent_evidence_ref: 'ev-1', consent_expires_at: null,
    line_type: 'mobile', required_consent: 'prior_express_written', rules: ['US-mobile'], citations: ['47 U.S.C. 227(b)(1)(A)(iii)'],
    identification: 'Hello, this is an automated assistant.', opt_out_offered: true, identified_at: at('2027-06-15T15:00:05Z'), keep_until: null,
    checks: { ...admissionChecks(FACTS, '+13055550100', DIALLED), dnc_registries: [{ registry: 'US-NDNC', source: 'ftc', numbers: 12, imported_at: '2027-06-10T00:00:00.000Z' }] },
    ...overrides,
  };
}

const HOLD: HoldRow = {
  id: 'h', account_id: 'a', mode: 'test', customer_id: 'c', reference: 'x', amount_cents: 400, status: 'settled', charged_cents: 60,
  created_at: at('2027-06-15T15:00:00.010Z'), expires_at: at('2027-06-15T15:30:00Z'), resolved_at: at('2027-06-15T15:03:00Z'),
};

const gates = (f: TrailFacts) => complianceTrail(f).map((g) => `${g.gate}:${g.passed ? 'passed' : 'failed'}`);

test('a dialled call: every gate once, in time and check order, with what each read at the dial', (t) => {
  const refused = { reason: 'concurrency_limit', detail: null, created_at: at('2027-06-15T14:30:00Z') };
  const trail = complianceTrail({ call: call(), record: record(), refusedStarts: [refused], hold: HOLD });
  t.deepEqual(trail.map((g) => `${g.gate}:${g.passed}`), [
    'request:true', 'hold:false', 'deadline:true', 'do_not_call:true', 'consent:true', 'no_redial:true', 'readiness:true', 'frequency_caps:true', 'emergency_closure:true',
    'calling_window:true', 'caller_id:true', 'hold:true', 'identification:true',
  ]);
  const detail = (gate: string, passed = true) => trail.find((g) => g.gate === gate && g.passed === passed)!.detail;
  t.is(detail('do_not_call'), "The number +13055550123 is not on the account's do-not-call list, and not on US-NDNC (loaded 2027-06-10T00:00:00.000Z, 12 numbers, from ftc).");
  t.regex(detail('frequency_caps'), /^Under US-FL \(Fla\. Stat\. § 501\.616\(6\)\(b\)\): 1 earlier dial attempt\(s\) to the number in the last \d+ days, within the caps\.$/);
  t.regex(detail('calling_window'), /^Open in US, US-FL: local time 2027-06-15 11:00 \(America\/New_York\).*inside US \(.+; the law\) and US-FL \(Fla\. Stat\./);
  t.is(detail('hold'), '$4.00 held for the longest call (test mode); settled 2027-06-15T15:03:00.000Z: $0.60 charged, the rest released.');
  t.regex(detail('hold', false), /^The call start was refused: .*\(concurrency_limit\)\. The request waited and was tried again\.$/);
  t.is(detail('caller_id'), "Called from +13055550100, the customer's number in US.");
});

test('a request ended before its dial fails at the gate its outcome names; a released hold says so', (t) => {
  const none = record({ admitted_at: null, identified_at: null, checks: null });
  const ended = (outcome: string, status: 'blocked' | 'expired' = 'blocked') =>
    gates({ call: call({ status, outcome, dialed_at: null, summary: 'Not dialled.' }), record: none, refusedStarts: [], hold: null });
  t.deepEqual(ended('do_not_call_listed'), ['request:passed', 'do_not_call:failed']);
  t.deepEqual(ended('consent_expired'), ['request:passed', 'consent:failed']);
  t.deepEqual(ended('requested_call_only'), ['request:passed', 'consent:failed']);
  t.deepEqual(ended('no_redial_after_hang_up'), ['request:passed', 'no_redial:failed']);
  t.deepEqual(ended('expired', 'expired'), ['request:passed', 'deadline:failed']);
  const released = complianceTrail({ call: call(), record: record(), refusedStarts: [], hold: { ...HOLD, status: 'released', charged_cents: null } });
  t.regex(released.find((g) => g.gate === 'hold')!.detail, /^\$4\.00 held for the longest call \(test mode\); released 2027-06-15T15:03:00\.000Z with nothing charged\.$/);
});

test("a request ended before its dial is said in English on the trail, whatever the language of its summary (issue 23 §5)", (t) => {
  const none = record({ admitted_at: null, identified_at: null, checks: null });
  const summary = "Le numéro figure sur une liste d'opposition aux appels ; il n'a donc pas été appelé.";
  const trail = complianceTrail({ call: call({ status: 'blocked', outcome: 'do_not_call_listed', dialed_at: null, summary }), record: none, refusedStarts: [], hold: null });
  t.is(trail.find((g) => g.gate === 'do_not_call')!.detail, 'The number is on a do-not-call list, so it was not dialled.');
});

test('a queued request fails at the gate it waits at, with its words and the next attempt; a window names its rule', (t) => {
  const waiting = (reason: string, detail: string | null = null) =>
    complianceTrail({
      call: call({ status: 'queued', outcome: null, dialed_at: null, waiting_reason: reason, waiting_detail: detail, created_at: at('2027-06-14T20:00:00Z'), updated_at: at('2027-06-15T03:00:00Z'), next_attempt_at: at('2027-06-15T12:00:00Z') }),
      record: record({ admitted_at: null, identified_at: null, checks: null }),
      refusedStarts: [],
      hold: null,
    }).at(-1)!;
  const window = waiting('outside_calling_window');
  t.like(window, { gate: 'calling_window', passed: false, at: '2027-06-15T03:00:00.000Z' });
  t.regex(window.detail, /^Waiting: the number's calling window is closed \(outside_calling_window\)\. Tried again at 2027-06-15T12:00:00\.000Z\. \+13055550123 .* is closed: it is Monday 2027-06-14 23:00/);
  t.like(waiting('frequency_cap'), { gate: 'frequency_caps', passed: false });
  t.like(waiting('customer_not_attested', 'The customer has not accepted the terms.'), { gate: 'readiness', passed: false, detail: 'Waiting: The customer has not accepted the terms. Tried again at 2027-06-15T12:00:00.000Z.' });
  t.like(waiting('platform_at_capacity'), { gate: 'capacity', passed: false });
  t.like(waiting('no_number_in_country'), { gate: 'caller_id', passed: false });
  // A money refusal already in the activity log is not shown twice.
  const refused = { reason: 'insufficient_balance', detail: { hold_cents: 400 }, created_at: at('2027-06-15T03:00:00Z') };
  const trail = complianceTrail({
    call: call({ status: 'queued', outcome: null, dialed_at: null, waiting_reason: 'insufficient_balance', created_at: at('2027-06-14T20:00:00Z'), updated_at: at('2027-06-15T03:00:00Z') }),
    record: record({ admitted_at: null, identified_at: null, checks: null }),
    refusedStarts: [refused],
    hold: null,
  });
  t.deepEqual(trail.map((g) => `${g.gate}:${g.passed}`), ['request:true', 'hold:false']);
  t.regex(trail[1].detail, /insufficient_balance\)\. The request waited and was tried again\. The hold asked for was \$4\.00\.$/);
});

test("a policy window (no law sets hours) is named for what it is, never by the platform's name", (t) => {
  const berlin = { ...FACTS, to: '+49301234562', toCountry: 'DE', attempts: [] };
  const trail = complianceTrail({
    call: call({ to_e164: '+49301234562', to_country: 'DE' }),
    record: record({ to_e164: '+49301234562', to_country: 'DE', checks: { ...admissionChecks(berlin, '+49301234500', DIALLED), dnc_registries: [] } }),
    refusedStarts: [],
    hold: null,
  });
  const window = trail.find((g) => g.gate === 'calling_window')!.detail;
  t.is(window, "Open in DE: local time 2027-06-15 17:00 (Europe/Berlin), inside DE (the service's own hours: no law sets calling hours there).");
  t.notRegex(JSON.stringify(trail), /switchboard/i);
  t.regex(trail.find((g) => g.gate === 'do_not_call')!.detail, /no national registry is kept for DE\.$/);
  // Waiting for the window too: Sunday in Berlin.
  const sunday = complianceTrail({
    call: call({ to_e164: '+49301234562', to_country: 'DE', status: 'queued', outcome: null, dialed_at: null, waiting_reason: 'outside_calling_window', created_at: at('2027-06-13T09:00:00Z'), updated_at: at('2027-06-13T10:00:00Z') }),
    record: record({ admitted_at: null, identified_at: null, checks: null }),
    refusedStarts: [],
    hold: null,
  }).at(-1)!;
  t.like(sunday, { gate: 'calling_window', passed: false });
  t.regex(sunday.detail, /Sunday 2027-06-13 12:00.*DE \(the service's own hours: no law sets calling hours there, policy\) allows no calls that day/);
  t.notRegex(sunday.detail, /switchboard/i);
});

test('a call dialled before its checks were kept says what was checked but not kept', (t) => {
  const trail = complianceTrail({ call: call(), record: record({ checks: null }), refusedStarts: [], hold: null });
  const byGate = Object.fromEntries(trail.map((g) => [g.gate, g.detail]));
  t.regex(byGate.calling_window, /not kept for calls dialled before the trail was recorded/);
  t.regex(byGate.frequency_caps, /not kept/);
  t.regex(byGate.do_not_call, /^The number \+13055550123 is on neither the account's do-not-call list nor a national registry\./);
  t.regex(byGate.consent, /^Held: prior express written consent, obtained 2027-06-01T10:00:00\.000Z \(form; evidence ev-1\)\. Needed for a mobile line: prior express written consent, under US-mobile/);
});

test('issue 23: the identification gate says the opening as played; a machine that cut it short leaves out what was never said', (t) => {
  const opening = {
    rules: [],
    segments: [
      { kind: 'identification', text: 'Hello, this call is on behalf of Bright Dental LLC.', played: true },
      { kind: 'opt_out', text: 'To stop these calls, press 9 or say stop.', played: true },
      { kind: 'question', text: 'Do you have a moment?', played: false },
    ],
  };
  const whole = opening.segments.map((s) => s.text).join(' ');
  const trail = complianceTrail({ call: call(), record: record({ identification: whole, opening }), refusedStarts: [], hold: HOLD });
  t.is(
    trail.find((g) => g.gate === 'identification')!.detail,
    'The agent opened with: "Hello, this call is on behalf of Bright Dental LLC. To stop these calls, press 9 or say stop.", offering the opt-out.',
  );
});

test('a request admitted and then stopped right before the dial (listed do-not-call meanwhile) fails at do_not_call after every gate it passed', (t) => {
  const base = record({ identified_at: null });
  const stopped = record({ identified_at: null, checks: { ...(base.checks as object), before_dial: { checked_at: '2027-06-15T15:00:02.000Z', do_not_call: 'listed', dialled: false, outcome: 'do_not_call_listed' } } });
  const blocked = call({ status: 'blocked', outcome: 'do_not_call_listed', dialed_at: null, carrier_call_id: null });
  const trail = complianceTrail({ call: blocked, record: stopped, refusedStarts: [], hold: null });
  t.deepEqual(trail.map((g) => `${g.gate}:${g.passed}`).slice(-2), ['caller_id:true', 'do_not_call:false']);
  t.is(trail.at(-1)!.detail, 'Checked again right before the dial: the number is on a do-not-call list, so it was not dialled.');
  t.is(trail.at(-1)!.at, '2027-06-15T15:00:02.000Z');
  // Without the mark the trail of the same call says nothing failed: what the fix adds.
  t.false(complianceTrail({ call: blocked, record: base, refusedStarts: [], hold: null }).some((g) => !g.passed));
});
