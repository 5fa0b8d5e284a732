import type { LineTypeOf } from '../call/line-types.ts';
import type { ConsentGate } from '../call/requests.ts';
import { consentExpired, consentExplanation, consentMeets, requiredConsent } from './consent.ts';

/**
 * The consent gate of `POST /v1/calls`: the number's line type (cached carrier lookup), then the
 * pure rule (consent.ts). The call room takes it as a port, wired in app/, so it never imports
 * the scheduler (which imports it).
 */
export function createConsentGate(lineTypeOf: LineTypeOf): ConsentGate {
  return async ({ mode, e164, country, consent, now }) => {
    const lineType = await lineTypeOf(mode, e164, now);
    const requirement = requiredConsent(e164, country, lineType, now);
    // Consent that has already expired is no consent.
    const held = consentExpired(consent.expiresAt, now) ? 'none' : consent.type;
    return consentMeets(held, requirement) ? { ok: true, lineType } : { ok: false, lineType, explanation: consentExplanation(lineType, requirement) };
  };
}
