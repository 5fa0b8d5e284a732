import fc from 'fast-check';
import type { ReadinessFacts } from '../../actors/customer/readiness.ts';

/** A live customer for whom every readiness check passes, nothing asked for and no link out; each test changes what it is about. */
export function readyFacts(overrides: Partial<ReadinessFacts> = {}): ReadinessFacts {
  return {
    mode: 'live',
    accountMode: 'live',
    kybStatus: 'verified',
    agreementSigned: true,
    availableCents: 10_000,
    callReserveCents: 400,
    countryOpened: true,
    speechCertified: true,
    hasNumberInCountry: true,
    liveCarrierConfigured: true,
    scriptCertified: true,
    termsAccepted: true,
    requestedSteps: [],
    onboardingLinkActive: false,
    staleDncRegistries: [],
    ...overrides,
  };
}

/** Any readiness facts: both modes, every check either way, the balance around the reserve. */
export const readinessFactsArb: fc.Arbitrary<ReadinessFacts> = fc.record({
  mode: fc.constantFrom('test' as const, 'live' as const),
  accountMode: fc.constantFrom('test' as const, 'live' as const),
  kybStatus: fc.constantFrom('pending', 'verified', 'rejected'),
  agreementSigned: fc.boolean(),
  availableCents: fc.integer({ min: -1_000, max: 1_000 }),
  callReserveCents: fc.integer({ min: 0, max: 1_000 }),
  countryOpened: fc.boolean(),
  speechCertified: fc.boolean(),
  hasNumberInCountry: fc.boolean(),
  liveCarrierConfigured: fc.boolean(),
  scriptCertified: fc.boolean(),
  termsAccepted: fc.boolean(),
  requestedSteps: fc.subarray(['number', 'script', 'agent', 'calendar']),
  onboardingLinkActive: fc.boolean(),
  staleDncRegistries: fc.constantFrom([], [{ id: 'US-NDNC', name: 'US National Do Not Call Registry', country: 'US', maxAgeDays: 31, importedAt: null, staleSince: null }]),
});
