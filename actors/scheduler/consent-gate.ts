import type { LineTypeOf } from '../call/line-types.ts';
import type { ConsentGate } from '../call/requests.ts';
import type { LineType } from '../../runtime/types.ts';
import { consentExpired, consentExplanation, consentMeets, noRedialRule, requiredConsent } from './consent.ts';

/**
 * The line type a call is decided on: the carrier's answer, except that a business landline is
 * one only when the request itself says the called party is a business. A lookup alone (a
 * caller-name database's `BUSINESS`) never takes the 47 U.S.C. 227(b)(1)(B) exemption: a wrong
 * answer would make an unlawful call, so the landline is then read as residential.
 */
export function effectiveLineType(lookedUp: LineType, calledParty: 'business' | 'consumer' | null): LineType {
  if (lookedUp !== 'business_landline') return lookedUp;
  return calledParty === 'business' ? 'business_landline' : 'landline';
}

/**
 * The consent gate of `POST /v1/calls`: the number's line type (cached carrier lookup), then the
 * pure rule (consent.ts). The call room takes it as a port, wired in app/, so it never imports
 * the scheduler (which imports it).
 */
export function createConsentGate(lineTypeOf: LineTypeOf): ConsentGate {
  return async ({ mode, e164, country, consent, calledParty, earlierOutcomes, now }) => {
    const lineType = effectiveLineType(await lineTypeOf(mode, e164, now), calledParty);
    const requirement = requiredConsent(e164, country, lineType, now);
    // Consent that has already expired is no consent.
    const held = consentExpired(consent.expiresAt, now) ? 'none' : consent.type;
    if (!consentMeets(held, requirement)) {
      const code = requirement.required === 'requested_call' ? 'requested_call_only' : 'consent_required';
      return { ok: false, lineType, code, explanation: consentExplanation(lineType, requirement) };
    }
    // Then, as at the dial (admission.ts): no redial after the callee hung up.
    const noRedial = noRedialRule(e164, country, earlierOutcomes);
    if (noRedial) {
      return {
        ok: false,
        lineType,
        code: 'no_redial_after_hang_up',
        explanation: `The callee ended an earlier call from this customer to this number, and the law of the number forbids calling again (${noRedial.citation}).`,
      };
    }
    return { ok: true, lineType };
  };
}
