import { NANP_AREA_CODES } from '../shared/nanp-area-codes.ts';

/** Countries whose numbers have an area code an order may prefer (the NANP's, as Twilio's AreaCode filter). */
const AREA_CODE_COUNTRIES: Readonly<Record<string, string>> = { US: 'the United States', CA: 'Canada' };

/**
 * Why `areaCode` cannot be asked for a number of `country`, in words for the API's message; null
 * when it can. Only the NANP has area codes to prefer, and only codes in service in the
 * customer's own country (the geographic codes of actors/shared/nanp-area-codes.ts): an
 * unassigned code (999), a non-geographic one (800, 900) or the other country's (416 for a US
 * customer) is refused rather than answered with a number somewhere else. Pure.
 */
export function areaCodeRefusal(country: string, areaCode: string): string | null {
  const name = AREA_CODE_COUNTRIES[country];
  if (!name) {
    return `area_code applies only to numbers in the United States and Canada; this customer's numbers are in ${country}, where the service picks the number. Leave area_code out.`;
  }
  if (!/^[0-9]{3}$/.test(areaCode)) return `area_code must be three digits, such as 415.`;
  const entry = NANP_AREA_CODES[areaCode];
  if (!entry) return `area_code ${areaCode} is not a geographic area code in service in ${name}.`;
  if (entry.country !== country) return `area_code ${areaCode} is in ${AREA_CODE_COUNTRIES[entry.country]}, not in ${name}, where this customer's numbers are.`;
  return null;
}
