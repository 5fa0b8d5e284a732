/**
 * Geographic NANP area codes of the United States and Canada: the state or province each serves
 * and every IANA time zone its subscribers may keep.
 *
 * Source. The list of codes and their states/provinces follows the NANPA area code assignments
 * (nationalnanpa.com, "NPA database", geographic NPAs in service in the US and Canada) as carried
 * by Google libphonenumber's metadata (v9.0.43, via libphonenumber-js 1.13.16: every NPA it
 * accepts as a US or Canadian fixed-line/mobile number is here, and no other). Zones start from
 * libphonenumber's `resources/timezones/map_data.txt` and were corrected by hand where that file
 * is stale or wrong, on the rule "if any part of an area code keeps another clock, list that
 * clock too" (each corrected row carries its reason). Overlays share their parent's zones.
 *
 * Not listed on purpose: non-geographic codes (toll-free 8XX, 900, personal 5XX, 600/622/633,
 * 700/710) and Canada's 273, which libphonenumber accepted in September 2026 before any source
 * here said where it is; an unlisted code falls back to every zone of its country.
 *
 * Zones are named by one tzdb zone per clock, as libphonenumber does (Michigan and most of
 * Indiana keep America/New_York's clock, New Brunswick America/Halifax's); zones with a clock of
 * their own (America/Phoenix, America/Regina, America/Creston, …) are named where they apply.
 */

/** Where an area code's subscribers are: its country, state/province and time zones. */
export interface AreaCode {
  country: 'US' | 'CA';
  /** USPS state code (DC for Washington D.C.) or Canada Post province/territory code. */
  region: string;
  /** Every IANA time zone a subscriber of this area code may be in; never empty. */
  zones: readonly string[];
}

const NEW_YORK = 'America/New_York';
const CHICAGO = 'America/Chicago';
const DENVER = 'America/Denver';
const BOISE = 'America/Boise';
const PHOENIX = 'America/Phoenix';
const LOS_ANGELES = 'America/Los_Angeles';
const ANCHORAGE = 'America/Anchorage';
const HONOLULU = 'Pacific/Honolulu';
const ST_JOHNS = 'America/St_Johns';
const HALIFAX = 'America/Halifax';
const TORONTO = 'America/Toronto';
const WINNIPEG = 'America/Winnipeg';
const REGINA = 'America/Regina';
const EDMONTON = 'America/Edmonton';
const VANCOUVER = 'America/Vancouver';

/** All of British Columbia outside the Lower Mainland: Pacific, Mountain, and MST all year. */
const BRITISH_COLUMBIA = [VANCOUVER, EDMONTON, 'America/Dawson_Creek', 'America/Fort_Nelson', 'America/Creston'];
/** Eastern Quebec (418 and overlays): Eastern, plus the Magdalen Islands and the Lower North Shore. */
const EASTERN_QUEBEC = [TORONTO, HALIFAX, 'America/Blanc-Sablon'];

const us = (region: string, ...zones: string[]): AreaCode => ({ country: 'US', region, zones });
const ca = (region: string, ...zones: string[]): AreaCode => ({ country: 'CA', region, zones });

/** Area code (three digits after +1) to where it is. */
export const NANP_AREA_CODES: Readonly<Record<string, AreaCode>> = {
  '201': us('NJ', NEW_YORK),
  '202': us('DC', NEW_YORK),
  '203': us('CT', NEW_YORK),
  '204': ca('MB', WINNIPEG),
  '205': us('AL', CHICAGO),
  '206': us('WA', LOS_ANGELES),
  '207': us('ME', NEW_YORK),
  '208': us('ID', BOISE, LOS_ANGELES), // Idaho panhandle on Pacific time
  '209': us('CA', LOS_ANGELES),
  '210': us('TX', CHICAGO),
  '212': us('NY', NEW_YORK),
  '213': us('CA', LOS_ANGELES),
  '214': us('TX', CHICAGO),
  '215': us('PA', NEW_YORK),
  '216': us('OH', NEW_YORK),
  '217': us('IL', CHICAGO),
  '218': us('MN', CHICAGO),
  '219': us('IN', NEW_YORK, CHICAGO), // north-west Indiana on Central time
  '220': us('OH', NEW_YORK),
  '223': us('PA', NEW_YORK),
  '224': us('IL', CHICAGO),
  '225': us('LA', CHICAGO),
  '226': ca('ON', TORONTO),
  '227': us('MD', NEW_YORK),
  '228': us('MS', CHICAGO),
  '229': us('GA', NEW_YORK),
  '231': us('MI', NEW_YORK),
  '234': us('OH', NEW_YORK),
  '235': us('MO', CHICAGO),
  '236': ca('BC', ...BRITISH_COLUMBIA), // province-wide overlay
  '239': us('FL', NEW_YORK),
  '240': us('MD', NEW_YORK),
  '248': us('MI', NEW_YORK),
  '249': ca('ON', TORONTO),
  '250': ca('BC', ...BRITISH_COLUMBIA), // East Kootenay on Mountain time; Peace River, Fort Nelson and Creston on MST all year
  '251': us('AL', CHICAGO),
  '252': us('NC', NEW_YORK),
  '253': us('WA', LOS_ANGELES),
  '254': us('TX', CHICAGO),
  '256': us('AL', CHICAGO),
  '257': ca('BC', ...BRITISH_COLUMBIA), // province-wide overlay
  '260': us('IN', NEW_YORK),
  '262': us('WI', CHICAGO),
  '263': ca('QC', TORONTO),
  '267': us('PA', NEW_YORK),
  '269': us('MI', NEW_YORK),
  '270': us('KY', CHICAGO, NEW_YORK), // Kentucky time-zone line crosses it
  '272': us('PA', NEW_YORK),
  '274': us('WI', CHICAGO),
  '276': us('VA', NEW_YORK),
  '279': us('CA', LOS_ANGELES),
  '281': us('TX', CHICAGO),
  '283': us('OH', NEW_YORK),
  '289': ca('ON', TORONTO),
  '301': us('MD', NEW_YORK),
  '302': us('DE', NEW_YORK),
  '303': us('CO', DENVER),
  '304': us('WV', NEW_YORK),
  '305': us('FL', NEW_YORK),
  '306': ca('SK', REGINA, EDMONTON, WINNIPEG), // Lloydminster on Alberta time, Creighton on Manitoba time
  '307': us('WY', DENVER),
  '308': us('NE', CHICAGO, DENVER), // panhandle on Mountain time
  '309': us('IL', CHICAGO),
  '310': us('CA', LOS_ANGELES),
  '312': us('IL', CHICAGO),
  '313': us('MI', NEW_YORK),
  '314': us('MO', CHICAGO),
  '315': us('NY', NEW_YORK),
  '316': us('KS', CHICAGO),
  '317': us('IN', NEW_YORK),
  '318': us('LA', CHICAGO),
  '319': us('IA', CHICAGO),
  '320': us('MN', CHICAGO),
  '321': us('FL', NEW_YORK),
  '323': us('CA', LOS_ANGELES),
  '324': us('FL', NEW_YORK),
  '325': us('TX', CHICAGO),
  '326': us('OH', NEW_YORK),
  '327': us('AR', CHICAGO),
  '329': us('NY', NEW_YORK),
  '330': us('OH', NEW_YORK),
  '331': us('IL', CHICAGO),
  '332': us('NY', NEW_YORK),
  '334': us('AL', CHICAGO, NEW_YORK), // Phenix City and Lanett keep Eastern time unofficially
  '336': us('NC', NEW_YORK),
  '337': us('LA', CHICAGO),
  '339': us('MA', NEW_YORK),
  '341': us('CA', LOS_ANGELES),
  '343': ca('ON', TORONTO),
  '346': us('TX', CHICAGO),
  '347': us('NY', NEW_YORK),
  '350': us('CA', LOS_ANGELES),
  '351': us('MA', NEW_YORK),
  '352': us('FL', NEW_YORK),
  '353': us('WI', CHICAGO),
  '354': ca('QC', TORONTO),
  '360': us('WA', LOS_ANGELES),
  '361': us('TX', CHICAGO),
  '363': us('NY', NEW_YORK),
  '364': us('KY', CHICAGO, NEW_YORK), // overlay of 270
  '365': ca('ON', TORONTO),
  '367': ca('QC', ...EASTERN_QUEBEC), // overlay of 418
  '368': ca('AB', EDMONTON),
  '369': us('CA', LOS_ANGELES),
  '380': us('OH', NEW_YORK),
  '382': ca('ON', TORONTO),
  '385': us('UT', DENVER),
  '386': us('FL', NEW_YORK),
  '401': us('RI', NEW_YORK),
  '402': us('NE', CHICAGO, DENVER), // western Cherry County on Mountain time
  '403': ca('AB', EDMONTON),
  '404': us('GA', NEW_YORK),
  '405': us('OK', CHICAGO),
  '406': us('MT', DENVER),
  '407': us('FL', NEW_YORK),
  '408': us('CA', LOS_ANGELES),
  '409': us('TX', CHICAGO),
  '410': us('MD', NEW_YORK),
  '412': us('PA', NEW_YORK),
  '413': us('MA', NEW_YORK),
  '414': us('WI', CHICAGO),
  '415': us('CA', LOS_ANGELES),
  '416': ca('ON', TORONTO),
  '417': us('MO', CHICAGO),
  '418': ca('QC', ...EASTERN_QUEBEC), // Magdalen Islands on Atlantic time; Lower North Shore on AST all year
  '419': us('OH', NEW_YORK),
  '423': us('TN', NEW_YORK, CHICAGO), // Marion, Sequatchie and Bledsoe Counties on Central time
  '424': us('CA', LOS_ANGELES),
  '425': us('WA', LOS_ANGELES),
  '428': ca('NB', HALIFAX),
  '430': us('TX', CHICAGO),
  '431': ca('MB', WINNIPEG),
  '432': us('TX', CHICAGO, DENVER), // parts of Culberson County keep Mountain time
  '434': us('VA', NEW_YORK),
  '435': us('UT', DENVER),
  '437': ca('ON', TORONTO),
  '438': ca('QC', TORONTO),
  '440': us('OH', NEW_YORK),
  '442': us('CA', LOS_ANGELES),
  '443': us('MD', NEW_YORK),
  '445': us('PA', NEW_YORK),
  '447': us('IL', CHICAGO),
  '448': us('FL', CHICAGO, NEW_YORK), // overlay of 850
  '450': ca('QC', TORONTO),
  '458': us('OR', LOS_ANGELES, BOISE), // overlay of 541: Malheur County on Mountain time
  '463': us('IN', NEW_YORK),
  '464': us('IL', CHICAGO),
  '468': ca('QC', TORONTO),
  '469': us('TX', CHICAGO),
  '470': us('GA', NEW_YORK),
  '472': us('NC', NEW_YORK),
  '474': ca('SK', REGINA, EDMONTON, WINNIPEG), // overlay of 306
  '475': us('CT', NEW_YORK),
  '478': us('GA', NEW_YORK),
  '479': us('AR', CHICAGO),
  '480': us('AZ', PHOENIX),
  '484': us('PA', NEW_YORK),
  '501': us('AR', CHICAGO),
  '502': us('KY', NEW_YORK),
  '503': us('OR', LOS_ANGELES),
  '504': us('LA', CHICAGO),
  '505': us('NM', DENVER),
  '506': ca('NB', HALIFAX),
  '507': us('MN', CHICAGO),
  '508': us('MA', NEW_YORK),
  '509': us('WA', LOS_ANGELES),
  '510': us('CA', LOS_ANGELES),
  '512': us('TX', CHICAGO),
  '513': us('OH', NEW_YORK),
  '514': ca('QC', TORONTO),
  '515': us('IA', CHICAGO),
  '516': us('NY', NEW_YORK),
  '517': us('MI', NEW_YORK),
  '518': us('NY', NEW_YORK),
  '519': ca('ON', TORONTO),
  '520': us('AZ', PHOENIX),
  '530': us('CA', LOS_ANGELES),
  '531': us('NE', CHICAGO, DENVER), // overlay of 402
  '534': us('WI', CHICAGO),
  '539': us('OK', CHICAGO),
  '540': us('VA', NEW_YORK),
  '541': us('OR', LOS_ANGELES, BOISE), // Malheur County on Mountain time
  '548': ca('ON', TORONTO),
  '551': us('NJ', NEW_YORK),
  '557': us('MO', CHICAGO),
  '559': us('CA', LOS_ANGELES),
  '561': us('FL', NEW_YORK),
  '562': us('CA', LOS_ANGELES),
  '563': us('IA', CHICAGO),
  '564': us('WA', LOS_ANGELES),
  '567': us('OH', NEW_YORK),
  '570': us('PA', NEW_YORK),
  '571': us('VA', NEW_YORK),
  '572': us('OK', CHICAGO),
  '573': us('MO', CHICAGO),
  '574': us('IN', NEW_YORK, CHICAGO), // Starke County on Central time
  '575': us('NM', DENVER),
  '579': ca('QC', TORONTO),
  '580': us('OK', CHICAGO, DENVER), // Kenton (Cimarron County) keeps Mountain time unofficially
  '581': ca('QC', ...EASTERN_QUEBEC), // overlay of 418
  '582': us('PA', NEW_YORK),
  '584': ca('MB', WINNIPEG),
  '585': us('NY', NEW_YORK),
  '586': us('MI', NEW_YORK),
  '587': ca('AB', EDMONTON),
  '601': us('MS', CHICAGO),
  '602': us('AZ', PHOENIX),
  '603': us('NH', NEW_YORK),
  '604': ca('BC', VANCOUVER),
  '605': us('SD', CHICAGO, DENVER), // West River on Mountain time
  '606': us('KY', NEW_YORK, CHICAGO), // Clinton and Cumberland Counties on Central time
  '607': us('NY', NEW_YORK),
  '608': us('WI', CHICAGO),
  '609': us('NJ', NEW_YORK),
  '610': us('PA', NEW_YORK),
  '612': us('MN', CHICAGO),
  '613': ca('ON', TORONTO),
  '614': us('OH', NEW_YORK),
  '615': us('TN', CHICAGO),
  '616': us('MI', NEW_YORK),
  '617': us('MA', NEW_YORK),
  '618': us('IL', CHICAGO),
  '619': us('CA', LOS_ANGELES),
  '620': us('KS', CHICAGO, DENVER), // Greeley and Hamilton Counties on Mountain time
  '623': us('AZ', PHOENIX),
  '626': us('CA', LOS_ANGELES),
  '628': us('CA', LOS_ANGELES),
  '629': us('TN', CHICAGO),
  '630': us('IL', CHICAGO),
  '631': us('NY', NEW_YORK),
  '636': us('MO', CHICAGO),
  '639': ca('SK', REGINA, EDMONTON, WINNIPEG), // overlay of 306
  '640': us('NJ', NEW_YORK),
  '641': us('IA', CHICAGO),
  '645': us('FL', NEW_YORK),
  '646': us('NY', NEW_YORK),
  '647': ca('ON', TORONTO),
  '650': us('CA', LOS_ANGELES),
  '651': us('MN', CHICAGO),
  '656': us('FL', NEW_YORK),
  '657': us('CA', LOS_ANGELES),
  '659': us('AL', CHICAGO),
  '660': us('MO', CHICAGO),
  '661': us('CA', LOS_ANGELES),
  '662': us('MS', CHICAGO),
  '667': us('MD', NEW_YORK),
  '669': us('CA', LOS_ANGELES),
  '672': ca('BC', ...BRITISH_COLUMBIA), // province-wide overlay
  '678': us('GA', NEW_YORK),
  '680': us('NY', NEW_YORK),
  '681': us('WV', NEW_YORK),
  '682': us('TX', CHICAGO),
  '683': ca('ON', TORONTO),
  '686': us('VA', NEW_YORK),
  '689': us('FL', NEW_YORK), // Orlando overlay (libphonenumber says Central: wrong)
  '701': us('ND', CHICAGO, DENVER), // south-west North Dakota on Mountain time
  '702': us('NV', LOS_ANGELES),
  '703': us('VA', NEW_YORK),
  '704': us('NC', NEW_YORK),
  '705': ca('ON', TORONTO),
  '706': us('GA', NEW_YORK),
  '707': us('CA', LOS_ANGELES),
  '708': us('IL', CHICAGO),
  '709': ca('NL', ST_JOHNS, HALIFAX, 'America/Puerto_Rico'), // Labrador on Atlantic time
  '712': us('IA', CHICAGO),
  '713': us('TX', CHICAGO),
  '714': us('CA', LOS_ANGELES),
  '715': us('WI', CHICAGO),
  '716': us('NY', NEW_YORK),
  '717': us('PA', NEW_YORK),
  '718': us('NY', NEW_YORK),
  '719': us('CO', DENVER),
  '720': us('CO', DENVER),
  '724': us('PA', NEW_YORK),
  '725': us('NV', LOS_ANGELES),
  '726': us('TX', CHICAGO),
  '727': us('FL', NEW_YORK),
  '728': us('FL', NEW_YORK),
  '730': us('IL', CHICAGO),
  '731': us('TN', CHICAGO),
  '732': us('NJ', NEW_YORK),
  '734': us('MI', NEW_YORK),
  '737': us('TX', CHICAGO),
  '738': us('CA', LOS_ANGELES),
  '740': us('OH', NEW_YORK),
  '742': ca('ON', TORONTO),
  '743': us('NC', NEW_YORK),
  '747': us('CA', LOS_ANGELES),
  '748': us('CO', DENVER),
  '753': ca('ON', TORONTO),
  '754': us('FL', NEW_YORK),
  '757': us('VA', NEW_YORK),
  '760': us('CA', LOS_ANGELES),
  '762': us('GA', NEW_YORK),
  '763': us('MN', CHICAGO),
  '765': us('IN', NEW_YORK),
  '769': us('MS', CHICAGO),
  '770': us('GA', NEW_YORK),
  '771': us('DC', NEW_YORK),
  '772': us('FL', NEW_YORK),
  '773': us('IL', CHICAGO),
  '774': us('MA', NEW_YORK),
  '775': us('NV', LOS_ANGELES, DENVER), // West Wendover and Jackpot keep Mountain time
  '778': ca('BC', ...BRITISH_COLUMBIA), // province-wide overlay
  '779': us('IL', CHICAGO),
  '780': ca('AB', EDMONTON),
  '781': us('MA', NEW_YORK),
  '782': ca('NS', HALIFAX),
  '785': us('KS', CHICAGO, DENVER), // Sherman and Wallace Counties on Mountain time
  '786': us('FL', NEW_YORK),
  '801': us('UT', DENVER),
  '802': us('VT', NEW_YORK),
  '803': us('SC', NEW_YORK),
  '804': us('VA', NEW_YORK),
  '805': us('CA', LOS_ANGELES),
  '806': us('TX', CHICAGO),
  '807': ca('ON', TORONTO, WINNIPEG, 'America/Atikokan'), // north-west Ontario on Central time; Atikokan on EST all year
  '808': us('HI', HONOLULU),
  '810': us('MI', NEW_YORK),
  '812': us('IN', NEW_YORK, CHICAGO), // south-west Indiana on Central time
  '813': us('FL', NEW_YORK),
  '814': us('PA', NEW_YORK),
  '815': us('IL', CHICAGO),
  '816': us('MO', CHICAGO),
  '817': us('TX', CHICAGO),
  '818': us('CA', LOS_ANGELES),
  '819': ca('QC', TORONTO),
  '820': us('CA', LOS_ANGELES),
  '821': us('SC', NEW_YORK),
  '825': ca('AB', EDMONTON),
  '826': us('VA', NEW_YORK),
  '828': us('NC', NEW_YORK),
  '830': us('TX', CHICAGO),
  '831': us('CA', LOS_ANGELES),
  '832': us('TX', CHICAGO),
  '835': us('PA', NEW_YORK),
  '838': us('NY', NEW_YORK),
  '839': us('SC', NEW_YORK),
  '840': us('CA', LOS_ANGELES),
  '843': us('SC', NEW_YORK),
  '845': us('NY', NEW_YORK),
  '847': us('IL', CHICAGO),
  '848': us('NJ', NEW_YORK),
  '850': us('FL', CHICAGO, NEW_YORK), // panhandle split by the Apalachicola River
  '854': us('SC', NEW_YORK),
  '856': us('NJ', NEW_YORK),
  '857': us('MA', NEW_YORK),
  '858': us('CA', LOS_ANGELES),
  '859': us('KY', NEW_YORK),
  '860': us('CT', NEW_YORK),
  '862': us('NJ', NEW_YORK),
  '863': us('FL', NEW_YORK),
  '864': us('SC', NEW_YORK),
  '865': us('TN', NEW_YORK),
  '867': ca('NT', 'America/Whitehorse', EDMONTON, WINNIPEG, TORONTO, 'America/Atikokan'), // Yukon, NWT and Nunavut (Coral Harbour on EST all year)
  '870': us('AR', CHICAGO),
  '872': us('IL', CHICAGO),
  '873': ca('QC', TORONTO),
  '878': us('PA', NEW_YORK),
  '879': ca('NL', ST_JOHNS, HALIFAX, 'America/Puerto_Rico'), // overlay of 709
  '901': us('TN', CHICAGO),
  '902': ca('NS', HALIFAX),
  '903': us('TX', CHICAGO),
  '904': us('FL', NEW_YORK),
  '905': ca('ON', TORONTO),
  '906': us('MI', NEW_YORK, CHICAGO), // four counties bordering Wisconsin on Central time
  '907': us('AK', ANCHORAGE, 'America/Adak'), // Aleutians west of 169.5° W on Hawaii-Aleutian time
  '908': us('NJ', NEW_YORK),
  '909': us('CA', LOS_ANGELES),
  '910': us('NC', NEW_YORK),
  '912': us('GA', NEW_YORK),
  '913': us('KS', CHICAGO),
  '914': us('NY', NEW_YORK),
  '915': us('TX', DENVER),
  '916': us('CA', LOS_ANGELES),
  '917': us('NY', NEW_YORK),
  '918': us('OK', CHICAGO),
  '919': us('NC', NEW_YORK),
  '920': us('WI', CHICAGO),
  '925': us('CA', LOS_ANGELES),
  '928': us('AZ', PHOENIX, DENVER), // Navajo Nation observes daylight time
  '929': us('NY', NEW_YORK),
  '930': us('IN', NEW_YORK, CHICAGO), // overlay of 812
  '931': us('TN', CHICAGO, NEW_YORK), // Cumberland County (Crossville) on Eastern time
  '934': us('NY', NEW_YORK),
  '936': us('TX', CHICAGO),
  '937': us('OH', NEW_YORK),
  '938': us('AL', CHICAGO),
  '940': us('TX', CHICAGO),
  '941': us('FL', NEW_YORK),
  '942': ca('ON', TORONTO),
  '943': us('GA', NEW_YORK),
  '945': us('TX', CHICAGO),
  '947': us('MI', NEW_YORK),
  '948': us('VA', NEW_YORK),
  '949': us('CA', LOS_ANGELES),
  '951': us('CA', LOS_ANGELES),
  '952': us('MN', CHICAGO),
  '954': us('FL', NEW_YORK),
  '956': us('TX', CHICAGO),
  '959': us('CT', NEW_YORK),
  '970': us('CO', DENVER),
  '971': us('OR', LOS_ANGELES),
  '972': us('TX', CHICAGO),
  '973': us('NJ', NEW_YORK),
  '975': us('MO', CHICAGO),
  '978': us('MA', NEW_YORK),
  '979': us('TX', CHICAGO),
  '980': us('NC', NEW_YORK),
  '983': us('CO', DENVER),
  '984': us('NC', NEW_YORK),
  '985': us('LA', CHICAGO),
  '986': us('ID', BOISE, LOS_ANGELES), // overlay of 208
  '989': us('MI', NEW_YORK),
};

/**
 * The area code entry of a +1 number (its state or province and zones); null when the number is
 * not a +1 number or its area code is not listed. The one reading of "where is this NANP number"
 * that the calling windows, the frequency caps and the consent rule share.
 */
export function nanpAreaOf(e164: string): AreaCode | null {
  return /^\+1\d{3}/.test(e164) ? (NANP_AREA_CODES[e164.slice(2, 5)] ?? null) : null;
}
