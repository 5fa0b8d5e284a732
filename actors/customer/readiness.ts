import type { Mode } from '../../runtime/types.ts';

/**
 * Readiness: whether a customer can be called, and exactly what stands in the way. Pure; the
 * readiness endpoint, provisioning and the call path all decide through `assessReadiness`.
 */

export interface ReadinessFacts {
  /** The customer's mode. Test customers are not held back by the four live-money gates. */
  mode: Mode;
  accountMode: Mode;
  kybStatus: string;
  agreementSigned: boolean;
  availableCents: number;
  /** What a call start would hold now (pricing.callReserveCents). */
  callReserveCents: number;
  countryOpened: boolean;
  speechCertified: boolean;
  hasNumberInCountry: boolean;
  scriptCertified: boolean;
  termsAccepted: boolean;
}

export type BlockerCode =
  | 'reseller_not_live'
  | 'kyb_incomplete'
  | 'agreement_unsigned'
  | 'insufficient_balance'
  | 'human_speech_gate_closed'
  | 'no_number_in_country'
  | 'script_uncertified'
  | 'customer_not_attested';

export type CheckName =
  | 'account_live'
  | 'business_verified'
  | 'agreement_signed'
  | 'balance_loaded'
  | 'speech_certified_for_language'
  | 'number_in_country'
  | 'script_certified'
  | 'customer_accepted_terms';

/** Who owes the next move to clear a blocker. */
export type Party = 'reseller' | 'service' | 'customer';

interface Gate {
  check: CheckName;
  blocker: BlockerCode;
  /** Applies only to live customers (live money and live status). */
  liveOnly: boolean;
  owner: Party;
  message: string;
  passes(f: ReadinessFacts): boolean;
}

/** The gates in the order they are reported. */
const GATES: readonly Gate[] = [
  {
    check: 'account_live', blocker: 'reseller_not_live', liveOnly: true, owner: 'reseller',
    message: 'Your account is still in test mode; live calling starts once it is approved for live.',
    passes: (f) => f.accountMode === 'live',
  },
  {
    check: 'business_verified', blocker: 'kyb_incomplete', liveOnly: true, owner: 'reseller',
    message: 'Business verification of your account is not finished.',
    passes: (f) => f.kybStatus === 'verified',
  },
  {
    check: 'agreement_signed', blocker: 'agreement_unsigned', liveOnly: true, owner: 'reseller',
    message: 'The reseller agreement has not been signed.',
    passes: (f) => f.agreementSigned,
  },
  {
    check: 'balance_loaded', blocker: 'insufficient_balance', liveOnly: true, owner: 'reseller',
    message: 'Your available balance does not cover the reserve of one call; top up to call.',
    passes: (f) => f.availableCents >= f.callReserveCents,
  },
  {
    check: 'speech_certified_for_language', blocker: 'human_speech_gate_closed', liveOnly: false, owner: 'service',
    message: "Calling in this customer's language has not been certified yet.",
    passes: (f) => f.countryOpened && f.speechCertified,
  },
  {
    check: 'number_in_country', blocker: 'no_number_in_country', liveOnly: false, owner: 'service',
    message: "There is no calling number in the customer's country yet.",
    passes: (f) => f.countryOpened && f.hasNumberInCountry,
  },
  {
    check: 'script_certified', blocker: 'script_uncertified', liveOnly: false, owner: 'service',
    message: "The customer's call script has not passed certification.",
    passes: (f) => f.scriptCertified,
  },
  {
    check: 'customer_accepted_terms', blocker: 'customer_not_attested', liveOnly: false, owner: 'customer',
    message: 'The customer has not accepted the calling terms; send them their onboarding link.',
    passes: (f) => f.termsAccepted,
  },
];

export interface Blocker {
  code: BlockerCode;
  message: string;
  owner: Party;
}

export interface ReadinessAssessment {
  ready: boolean;
  checks: Record<CheckName, boolean>;
  blockers: Blocker[];
}

/**
 * Every check as it stands, and the blockers the call path of this customer's mode refuses on.
 * Never ready while any blocker holds: `ready` is defined as "no blockers".
 */
export function assessReadiness(f: ReadinessFacts): ReadinessAssessment {
  const checks = {} as Record<CheckName, boolean>;
  const blockers: Blocker[] = [];
  for (const gate of GATES) {
    const passes = gate.passes(f);
    checks[gate.check] = passes;
    if (!passes && (f.mode === 'live' || !gate.liveOnly)) {
      blockers.push({ code: gate.blocker, message: gate.message, owner: gate.owner });
    }
  }
  return { ready: blockers.length === 0, checks, blockers };
}
