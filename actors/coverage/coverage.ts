import { consentNotices, type ConsentNotice } from '../shared/requested-call-only.ts';
import { describeStale, type StaleRegistry } from '../shared/dnc-registries.ts';

/**
 * Coverage of a country: whether it can be sold and what it waits on. Pure: a country row and
 * the facts of its gates in, the `coverage` object out.
 */

export interface CountryFacts {
  country: string;
  name: string;
  calling_language: string;
  number_route: string;
  numbers_available: number;
  opened: boolean;
  speech_certified: boolean;
}

export interface CoverageBlocker {
  code: 'country_not_opened' | 'human_speech_gate_closed' | 'no_numbers_available' | 'dnc_registry_stale';
  message: string;
}

export interface Coverage {
  object: 'coverage';
  country: string;
  status: 'available' | 'pending' | 'not_opened';
  sellable: boolean;
  calling_language: string | null;
  number_route: string;
  numbers_available: number;
  waiting_on: 'nobody' | 'service';
  summary: string;
  blockers: CoverageBlocker[];
  /** Jurisdictions of the country where only a call the person asked for is lawful; not blockers. */
  notices: ConsentNotice[];
}

/**
 * The coverage of an opened country, or of one not opened (`facts` null). `staleRegistries`: the
 * country's national do-not-call registries that stop calls now (actors/shared/dnc-registries.ts).
 */
export function assessCoverage(country: string, facts: CountryFacts | null, staleRegistries: readonly StaleRegistry[] = []): Coverage {
  if (!facts || !facts.opened) {
    return {
      object: 'coverage',
      country,
      status: 'not_opened',
      sellable: false,
      calling_language: facts?.calling_language ?? null,
      number_route: 'none',
      numbers_available: 0,
      waiting_on: 'service',
      summary: `${facts?.name ?? country} is not an opened market; customers there cannot be created yet.`,
      blockers: [{ code: 'country_not_opened', message: 'This country is not an opened market.' }],
      notices: consentNotices(country),
    };
  }
  const blockers: CoverageBlocker[] = [];
  if (!facts.speech_certified) {
    blockers.push({
      code: 'human_speech_gate_closed',
      message: `Calling in ${facts.calling_language} has not been certified yet.`,
    });
  }
  if (facts.numbers_available <= 0) {
    blockers.push({ code: 'no_numbers_available', message: `No numbers are in stock in ${facts.name} right now.` });
  }
  for (const stale of staleRegistries) blockers.push({ code: 'dnc_registry_stale', message: describeStale(stale) });
  const sellable = blockers.length === 0;
  return {
    object: 'coverage',
    country: facts.country,
    status: sellable ? 'available' : 'pending',
    sellable,
    calling_language: facts.calling_language,
    number_route: facts.number_route,
    numbers_available: facts.numbers_available,
    waiting_on: sellable ? 'nobody' : 'service',
    summary: sellable
      ? `${facts.name} is open: calls are made in ${facts.calling_language} from local numbers.`
      : `${facts.name} is opened; live calling waits on: ${blockers.map((b) => b.code).join(', ')}.`,
    blockers,
    notices: consentNotices(facts.country),
  };
}
