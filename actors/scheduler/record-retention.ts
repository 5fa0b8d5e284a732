/**
 * How long a call's compliance record (db/compliance-records.ts) must be kept. Pure.
 *
 * Germany, UWG § 7a(2) sentence 1: whoever advertises to a consumer by telephone keeps the proof of
 * the consent "ab Erteilung der Einwilligung sowie nach jeder Verwendung der Einwilligung fünf
 * Jahre"; every call is a use, so each call's record is kept five years from the call (which is
 * never before the consent was given). A lookup cannot tell a consumer's line from a business's,
 * so every call to a German number is kept so (docs/compliance.md, "Records of consent").
 * Elsewhere no law read sets a term: the record is kept (nothing deletes records) with no date.
 */

export const RECORD_RETENTION_RULES: readonly { country: string; years: number; citation: string; checked: string }[] = [
  { country: 'DE', years: 5, citation: 'UWG § 7a(2)', checked: '2026-11-27' },
];

/** Until when the record of a call to `country` admitted at `admittedAt` must be kept; null where no rule sets a term. */
export function recordKeptUntil(country: string, admittedAt: Date): Date | null {
  const rule = RECORD_RETENTION_RULES.find((r) => r.country === country);
  if (!rule) return null;
  const until = new Date(admittedAt);
  // Calendar years (29 February runs to 1 March): never shorter than the law's five years.
  until.setUTCFullYear(until.getUTCFullYear() + rule.years);
  return until;
}
