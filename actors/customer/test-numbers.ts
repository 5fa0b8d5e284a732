/**
 * Numbers handed to test customers by provisioning: from ranges each country reserves for
 * fiction and drama, so a test number can never ring a real person.
 */
const FICTIONAL: Record<string, { prefix: string; digits: number }> = {
  US: { prefix: '+1202555010', digits: 1 }, // NANP 555-0100..0199 are reserved for fiction
  CA: { prefix: '+1416555010', digits: 1 },
  GB: { prefix: '+447700900', digits: 3 }, // Ofcom drama range 07700 900000..900999
  IE: { prefix: '+353209100', digits: 3 },
  AU: { prefix: '+61491570', digits: 3 }, // ACMA fictional mobiles 0491 570 006..159
  DE: { prefix: '+4930231250', digits: 2 },
  FR: { prefix: '+3319900', digits: 4 }, // ARCEP fictional 01 99 00 xx xx
  ES: { prefix: '+34910000', digits: 3 },
  NL: { prefix: '+31201234', digits: 3 },
};

/** A fictional number in `country`; `pick` in [0,1) chooses which (Math.random by default). */
export function testNumberFor(country: string, pick = Math.random()): string {
  const range = FICTIONAL[country] ?? { prefix: '+1202555010', digits: 1 };
  const n = Math.floor(pick * 10 ** range.digits);
  return range.prefix + String(n).padStart(range.digits, '0');
}
