/**
 * Jurisdictions where an AI-voice sales call is lawful only when the called party asked for it
 * (issue 20 §1; docs/compliance.md, "State auto-dialler (ADAD) laws"). Data and one pure function:
 * the consent table (actors/scheduler/consent.ts) builds its `requested_call` rules from these
 * rows, and coverage and readiness show them as notices, so the three never disagree. A leaf
 * module: the rooms that show it must not import the scheduler (which imports them).
 */

export interface RequestedCallOnly {
  country: string;
  /** USPS state code. */
  state: string;
  /** The state's name, for people. */
  name: string;
  citation: string;
}

export const REQUESTED_CALL_ONLY: readonly RequestedCallOnly[] = [
  {
    country: 'US',
    state: 'WA',
    name: 'Washington',
    citation:
      'RCW 80.36.400(2) (no automatic dialing and announcing device for commercial solicitation, "the unsolicited initiation of a telephone conversation", of anyone in Washington)',
  },
  {
    country: 'US',
    state: 'ME',
    name: 'Maine',
    citation: '10 M.R.S. § 1498(2)(B),(C) and (6)(B) (no automated solicitation call to a cellular or unlisted number except in response to an inquiry the person initiated)',
  },
];

/** A rule a reseller should know of before calling in a country: shown on coverage and readiness. */
export interface ConsentNotice {
  /** The refusal a request meets there. */
  code: 'requested_call_only';
  /** The jurisdiction (calling-windows.ts EMERGENCY_JURISDICTIONS codes), e.g. `US-WA`. */
  jurisdiction: string;
  message: string;
  citation: string;
}

/** The jurisdictions of `country` where only a call the person asked for may be made (Washington, Maine). */
export function consentNotices(country: string): ConsentNotice[] {
  return REQUESTED_CALL_ONLY.filter((r) => r.country === country).map((r) => ({
    code: 'requested_call_only',
    jurisdiction: `${r.country}-${r.state}`,
    message:
      `${r.name} numbers may be called only when the called party asked for the call (consent type requested_call, with its evidence); ` +
      'every other request to them is refused, and checked again before each dial.',
    citation: r.citation,
  }));
}
