import { callingJurisdictions, callingRules, callingZones } from './calling-windows.ts';
import { capRules, CAP_LOOKBACK_MS } from './frequency-caps.ts';
import { localTime } from '../call/local-time.ts';
import type { AdmissionFacts } from './admission.ts';

/**
 * What the gates of a dialled request were decided on, kept with its compliance record (migration
 * 030) so the console's compliance trail shows the data each gate read at the dial, not today's.
 * Pure: the admission facts and `now` in. The do-not-call registries' load dates are added by the
 * statement that writes the record (db/compliance-records.ts), from the same database.
 */
export interface AdmissionChecks {
  readiness: { ready: true };
  do_not_call: { account_list: 'not_listed'; national_registry: 'not_listed' };
  frequency_caps: { rules: { id: string; citation: string }[]; attempts_counted: number; lookback_days: number };
  emergency_closures: { jurisdictions: string[]; closed: string[] };
  calling_window: {
    jurisdictions: string[];
    rules: { id: string; citation: string; basis: 'law' | 'policy' }[];
    /** The callee's possible zones and the local time in each at the dial. */
    local_times: { zone: string; local_time: string }[];
  };
  caller_id: string;
}

export function admissionChecks(facts: AdmissionFacts, from: string, now: Date): AdmissionChecks {
  const jurisdictions = callingJurisdictions(facts.to, facts.toCountry);
  return {
    readiness: { ready: true },
    do_not_call: { account_list: 'not_listed', national_registry: 'not_listed' },
    frequency_caps: {
      rules: capRules(facts.to, facts.toCountry).map((r) => ({ id: r.id, citation: r.citation })),
      attempts_counted: facts.attempts.length,
      lookback_days: Math.round(CAP_LOOKBACK_MS / 86_400_000),
    },
    emergency_closures: { jurisdictions, closed: jurisdictions.filter((j) => facts.emergencyClosures.has(j)) },
    calling_window: {
      jurisdictions,
      rules: callingRules(facts.to, facts.toCountry).map((r) => ({ id: r.id, citation: r.citation, basis: r.basis })),
      local_times: callingZones(facts.to, facts.toCountry).map((zone) => ({ zone, local_time: localTime(now, zone) })),
    },
    caller_id: from,
  };
}
