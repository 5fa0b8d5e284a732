import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Ranges countries reserve for fiction and drama: test mode's numbers come from here, so a test
 * number can never ring a real person. The simulated carrier sells them; provisioning hands them
 * to test customers through the numbers room (`actors/numbers/numbers.ts`). Pure.
 */

interface FictionalRange {
  /** E.164 prefix; `digits` more digits follow. */
  prefix: string;
  digits: number;
  /** The first and last suffix in the range when it does not span all `digits` (default 0 and 10^digits − 1). */
  first?: number;
  last?: number;
}

/** NANP 555-0100..0199 are fictional in every area code. */
const NANP_FICTIONAL = (areaCode: string): FictionalRange => ({ prefix: `+1${areaCode}55501`, digits: 2 });

const RANGES: Readonly<Record<string, FictionalRange>> = {
  US: NANP_FICTIONAL('202'),
  CA: NANP_FICTIONAL('416'),
  GB: { prefix: '+447700900', digits: 3 }, // Ofcom drama range 07700 900000..900999
  IE: { prefix: '+353209100', digits: 3 },
  AU: { prefix: '+61491570', digits: 3, first: 6, last: 159 }, // ACMA fictional mobiles 0491 570 006..159
  DE: { prefix: '+4930231250', digits: 2 },
  FR: { prefix: '+3319900', digits: 4 }, // ARCEP fictional 01 99 00 xx xx
  ES: { prefix: '+34910000', digits: 3 },
  NL: { prefix: '+31201234', digits: 3 },
};

const NANP_COUNTRIES = new Set(['US', 'CA']);

/** The countries with a fictional range. */
export const FICTIONAL_COUNTRIES: readonly string[] = Object.keys(RANGES);

/** Geographic number types: an area code whose numbers are of these is one in service. */
const GEOGRAPHIC = new Set(['FIXED_LINE', 'MOBILE', 'FIXED_LINE_OR_MOBILE']);

/**
 * Whether `areaCode` is a geographic area code in service in `country` (US or CA), as
 * libphonenumber's metadata knows it: no number is invented in an unassigned code (999), a
 * non-geographic one (800, 900) or another country's (416 is Canadian).
 */
export function areaCodeInService(country: string, areaCode: string): boolean {
  if (!NANP_COUNTRIES.has(country) || !/^[2-9]\d{2}$/.test(areaCode)) return false;
  const sample = parsePhoneNumberFromString(`+1${areaCode}5550100`);
  return !!sample && sample.isValid() && sample.country === country && GEOGRAPHIC.has(sample.getType() ?? '');
}

/** The range of `country`, in `areaCode` when one is asked for; none for an area code not in service there. */
function rangeOf(country: string, areaCode?: string): FictionalRange | undefined {
  if (areaCode && NANP_COUNTRIES.has(country)) return areaCodeInService(country, areaCode) ? NANP_FICTIONAL(areaCode) : undefined;
  return RANGES[country];
}

function size(range: FictionalRange): number {
  return (range.last ?? 10 ** range.digits - 1) - (range.first ?? 0) + 1;
}

function nth(range: FictionalRange, i: number): string {
  return range.prefix + String((range.first ?? 0) + i).padStart(range.digits, '0');
}

/**
 * Up to `limit` distinct fictional numbers of `country` (an area code is honoured for US and CA;
 * one not in service there has none), starting at the fraction `start` in [0,1) of the range and wrapping; none for a country
 * without a fictional range.
 */
export function fictionalNumbers(country: string, options: { areaCode?: string; limit: number; start?: number }): string[] {
  const range = rangeOf(country, options.areaCode);
  if (!range) return [];
  const n = size(range);
  const first = Math.floor((options.start ?? 0) * n) % n;
  return Array.from({ length: Math.min(options.limit, n) }, (_, i) => nth(range, (first + i) % n));
}

/** True when `e164` lies in a fictional range (NANP 555-0100..0199 in any area code). */
export function isFictional(e164: string): boolean {
  if (/^\+1[2-9]\d{2}55501\d{2}$/.test(e164)) return true;
  return Object.values(RANGES).some((range) => {
    const suffix = e164.slice(range.prefix.length);
    if (!e164.startsWith(range.prefix) || !/^\d+$/.test(suffix) || suffix.length !== range.digits) return false;
    return Number(suffix) >= (range.first ?? 0) && Number(suffix) <= (range.last ?? 10 ** range.digits - 1);
  });
}
