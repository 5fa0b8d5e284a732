import type { Mode } from '../../runtime/types.ts';
import { describeStale, type StaleRegistry } from '../shared/dnc-registries.ts';

/**
 * Readiness: whether a customer can be called, and exactly what stands in the way. Pure; the
 * readiness endpoint, provisioning and the call path all decide through `assessReadiness`.
 *
 * It answers two questions. The live one, "would a live call be turned away?", is asked of every
 * customer in every mode, so every failing check has its blocker. The test one, "would a test
 * call be turned away?", leaves out the four gates about live money and live status, because a
 * test call never reaches a carrier or money. A customer's own calls are decided on the question
 * of its mode.
 */

export interface ReadinessFacts {
  /** The customer's mode: which question its own calls are decided on. */
  mode: Mode;
  accountMode: Mode;
  kybStatus: string;
  agreementSigned: boolean;
  /** Spendable money of the customer's mode, cents. Test mode holds none (priced, never charged). */
  availableCents: number;
  /** What a call start would hold now (pricing.callReserveCents), cents. */
  callReserveCents: number;
  countryOpened: boolean;
  speechCertified: boolean;
  hasNumberInCountry: boolean;
  /** Live mode has a carrier (Twilio configured): without one no live call or number can be had. */
  liveCarrierConfigured: boolean;
  scriptCertified: boolean;
  termsAccepted: boolean;
  /** Provisioning steps the reseller has asked for: until asked, a step is the reseller's move. */
  requestedSteps: readonly string[];
  /** An onboarding link is out and unexpired: until then the terms wait on the reseller sending one. */
  onboardingLinkActive: boolean;
  /** National do-not-call registries of the customer's country that stop its calls (never loaded, or too old: actors/shared/dnc-registries.ts). */
  staleDncRegistries: readonly StaleRegistry[];
}

/** The spec's stable blocker codes, in the order they are reported. */
export const BLOCKER_CODES = [
  'reseller_not_live',
  'kyb_incomplete',
  'agreement_unsigned',
  'insufficient_balance',
  'carrier_not_configured',
  'human_speech_gate_closed',
  'no_number_in_country',
  'script_uncertified',
  'customer_not_attested',
  'dnc_registry_stale',
] as const;
export type BlockerCode = (typeof BLOCKER_CODES)[number];

export type CheckName =
  | 'account_live'
  | 'business_verified'
  | 'agreement_signed'
  | 'balance_loaded'
  | 'carrier_configured'
  | 'speech_certified_for_language'
  | 'number_in_country'
  | 'script_certified'
  | 'customer_accepted_terms'
  | 'dnc_registries_current';

/** Who owes the next move to clear a blocker (the spec's provisioning words). */
export type Party = 'reseller' | 'service' | 'customer';

/**
 * What clears a blocker, for a program and for a person. `api`: a request to this API (`path`
 * holds `{id}`, the customer's id, until the view fills it in; `body` is the JSON to send, if
 * any). `console`: something a person does in the console; there is no API for it.
 */
export type BlockerAction =
  | { type: 'api'; method: 'POST'; path: string; body?: Record<string, unknown>; description: string }
  | { type: 'console'; description: string };

export interface Blocker {
  code: BlockerCode;
  message: string;
  waitingOn: Party;
  /** Null when only the service can move. */
  action: BlockerAction | null;
}

/** A blocker's wording, its owed move and its action as the facts stand. */
type Explanation = Omit<Blocker, 'code'>;

interface Gate {
  check: CheckName;
  blocker: BlockerCode;
  /** Asked only by the live question: live money and live status. */
  liveOnly: boolean;
  passes(f: ReadinessFacts): boolean;
  explain(f: ReadinessFacts): Explanation;
}

const byService = (message: string): Explanation => ({ message, waitingOn: 'service', action: null });
const inConsole = (message: string, description: string): Explanation => ({
  message,
  waitingOn: 'reseller',
  action: { type: 'console', description },
});

/**
 * A provisioning step: the reseller's move until asked for (the action asks), then the service's.
 * A country not opened is the service's move whatever was asked.
 */
function provisioningStep(f: ReadinessFacts, step: 'number' | 'script', missing: string, ask: string): Explanation {
  if (step === 'number' && !f.countryOpened) return byService("Calling in the customer's country has not opened yet.");
  if (f.requestedSteps.includes(step)) return byService(`${missing} The service is working on it.`);
  return {
    message: `${missing} Ask for it through provisioning.`,
    waitingOn: 'reseller',
    action: { type: 'api', method: 'POST', path: '/v1/customers/{id}/provisioning', body: { steps: [step] }, description: ask },
  };
}

/** The gates in the order they are reported. */
const GATES: readonly Gate[] = [
  {
    check: 'account_live', blocker: 'reseller_not_live', liveOnly: true,
    passes: (f) => f.accountMode === 'live',
    explain: () =>
      inConsole(
        'Your account is still in test mode; live calling starts once it is approved for live.',
        'Go live in the console once business verification is complete and the agreement is signed.',
      ),
  },
  {
    check: 'business_verified', blocker: 'kyb_incomplete', liveOnly: true,
    passes: (f) => f.kybStatus === 'verified',
    explain: () => inConsole('Business verification of your account is not finished.', 'Complete business verification in the console.'),
  },
  {
    check: 'agreement_signed', blocker: 'agreement_unsigned', liveOnly: true,
    passes: (f) => f.agreementSigned,
    explain: () => inConsole('The reseller agreement has not been signed.', 'Sign the reseller agreement in the console.'),
  },
  {
    check: 'balance_loaded', blocker: 'insufficient_balance', liveOnly: true,
    passes: (f) => f.availableCents >= f.callReserveCents,
    // A test customer reads the test balance, as a test key does: it never holds money.
    explain: (f) =>
      f.mode === 'test'
        ? inConsole(
            'This is a test customer: test calls are priced but never charged, so its test balance holds no money. ' +
              'Live money is on the live balance (read it with a live key); live calls are for customers created with a live key.',
            'Test money cannot be loaded. For live calls, create the customer with a live key; live money is on the live balance ' +
              '(read it with a live key, GET /v1/balance; top it up in the console).',
          )
        : inConsole('Your available balance does not cover the reserve of one call; top up to call.', 'Top up your balance in the console.'),
  },
  {
    // A live call needs a carrier; test calls never reach one.
    check: 'carrier_configured', blocker: 'carrier_not_configured', liveOnly: true,
    passes: (f) => f.liveCarrierConfigured,
    explain: () => byService('No carrier is set up for live calls yet, so live calls and live numbers are refused; the service is setting one up.'),
  },
  {
    check: 'speech_certified_for_language', blocker: 'human_speech_gate_closed', liveOnly: false,
    passes: (f) => f.countryOpened && f.speechCertified,
    explain: () => byService("Calling in this customer's language has not been certified yet."),
  },
  {
    check: 'number_in_country', blocker: 'no_number_in_country', liveOnly: false,
    passes: (f) => f.countryOpened && f.hasNumberInCountry,
    explain: (f) =>
      provisioningStep(f, 'number', "There is no calling number in the customer's country yet.", "Ask for a number in the customer's country."),
  },
  {
    check: 'script_certified', blocker: 'script_uncertified', liveOnly: false,
    passes: (f) => f.scriptCertified,
    explain: (f) => provisioningStep(f, 'script', "The customer's call script has not passed certification.", 'Ask for the call script.'),
  },
  {
    check: 'customer_accepted_terms', blocker: 'customer_not_attested', liveOnly: false,
    passes: (f) => f.termsAccepted,
    // Only the customer can accept, but only once they hold a link: until then the reseller owes it.
    explain: (f) => {
      const path = '/v1/customers/{id}/onboarding_link';
      return f.onboardingLinkActive
        ? {
            message: 'The customer has not yet accepted the calling terms on the onboarding link they were sent.',
            waitingOn: 'customer',
            action: { type: 'api', method: 'POST', path, description: 'If the customer lost their link, send a new one (it replaces the old one).' },
          }
        : {
            message: 'The customer has not accepted the calling terms; send them their onboarding link.',
            waitingOn: 'reseller',
            action: { type: 'api', method: 'POST', path, description: 'Send the customer their onboarding link.' },
          };
    },
  },
  {
    // Compliance is never relaxed in test mode: a test call waits as a live one would.
    check: 'dnc_registries_current', blocker: 'dnc_registry_stale', liveOnly: false,
    passes: (f) => f.staleDncRegistries.length === 0,
    explain: (f) => byService(f.staleDncRegistries.map(describeStale).join(' ')),
  },
];

/** One question's answer: ready exactly when nothing blocks. */
export interface ReadinessAnswer {
  ready: boolean;
  blockers: Blocker[];
}

/**
 * `ready` and `blockers` are what this customer's own calls are decided on (the call path):
 * the test answer for a test customer, the live answer for a live one.
 */
export interface ReadinessAssessment extends ReadinessAnswer {
  checks: Record<CheckName, boolean>;
  /** Would a live call be turned away? Every false check has its blocker here. */
  live: ReadinessAnswer;
  /** Would a test call be turned away? The four service/customer gates only. */
  test: ReadinessAnswer;
}

/** Every check as it stands, and both questions' blockers. Never ready while a blocker holds. */
export function assessReadiness(f: ReadinessFacts): ReadinessAssessment {
  const checks = {} as Record<CheckName, boolean>;
  const live: Blocker[] = [];
  const test: Blocker[] = [];
  for (const gate of GATES) {
    const passes = gate.passes(f);
    checks[gate.check] = passes;
    if (passes) continue;
    const blocker = { code: gate.blocker, ...gate.explain(f) };
    live.push(blocker);
    if (!gate.liveOnly) test.push(blocker);
  }
  const answers = { live: { ready: live.length === 0, blockers: live }, test: { ready: test.length === 0, blockers: test } };
  return { ...answers[f.mode], checks, ...answers };
}
