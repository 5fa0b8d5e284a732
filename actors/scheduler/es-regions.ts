/**
 * Spain's autonomous communities by geographic number prefix, for regional holidays (the calling
 * window closes on "festivos", art. 96.2 TRLGDCU, which are national, regional and local). Codes
 * are date-holidays' region codes for ES. Geographic numbers start 9 (or 8, the same province
 * digits after it); the province is the next one or two digits. Mobiles (6, 7) and
 * non-geographic numbers say nothing of where the callee is.
 *
 * Ceuta shares 956 with Cádiz and Melilla 952 with Málaga: those prefixes name both regions.
 * Local (municipal) holidays, two a year per municipality, are not modelled at all.
 */

/** date-holidays' ES regions: every autonomous community and the two autonomous cities. */
export const ES_REGIONS = ['AN', 'AR', 'AS', 'CB', 'CE', 'CL', 'CM', 'CN', 'CT', 'EX', 'GA', 'IB', 'MC', 'MD', 'ML', 'NC', 'PV', 'RI', 'VC'] as const;
export type EsRegion = (typeof ES_REGIONS)[number];

/** Province prefix after the leading 9 or 8 → communities. Two-digit keys cover every third digit. */
const PROVINCES: Readonly<Record<string, readonly EsRegion[]>> = {
  '1': ['MD'], // 91 Madrid
  '3': ['CT'], // 93 Barcelona
  '4': ['PV'], // 94 Bizkaia (943 Gipuzkoa, 945 Araba; 941, 942, 947, 948, 949 below)
  '41': ['RI'],
  '42': ['CB'],
  '47': ['CL'],
  '48': ['NC'],
  '49': ['CM'],
  '50': ['AN'], // Almería
  '51': ['AN'], // Málaga
  '52': ['AN', 'ML'], // Málaga, Melilla
  '53': ['AN'],
  '54': ['AN'],
  '55': ['AN'],
  '56': ['AN', 'CE'], // Cádiz, Ceuta
  '57': ['AN'],
  '58': ['AN'],
  '59': ['AN'],
  '6': ['VC'], // 96 Valencia, 964 Castellón, 965/966 Alicante
  '67': ['CM'], // Albacete
  '68': ['MC'], // Murcia
  '69': ['CM'], // Cuenca
  '71': ['IB'],
  '72': ['CT'],
  '73': ['CT'],
  '74': ['AR'],
  '75': ['CL'],
  '76': ['AR'],
  '77': ['CT'],
  '78': ['AR'],
  '79': ['CL'],
  '80': ['CL'],
  '81': ['GA'],
  '82': ['GA'],
  '83': ['CL'],
  '84': ['AS'],
  '85': ['AS'],
  '86': ['GA'],
  '87': ['CL'],
  '88': ['GA'],
  '20': ['CL'],
  '21': ['CL'],
  '22': ['CN'],
  '23': ['CL'],
  '24': ['EX'],
  '25': ['CM'],
  '26': ['CM'],
  '27': ['EX'],
  '28': ['CN'],
};

/** The communities the holder of a Spanish national number may be in: one (or two) for a geographic number, all otherwise. */
export function esRegionsOf(nationalNumber: string): readonly EsRegion[] {
  if (!/^[89]/.test(nationalNumber)) return ES_REGIONS;
  const rest = nationalNumber.slice(1);
  return PROVINCES[rest.slice(0, 2)] ?? PROVINCES[rest[0]] ?? ES_REGIONS;
}
