/**
 * The calling windows, one row per jurisdiction, each with its citation, the sources it was read
 * in and the date it was last checked (docs/compliance.md is the same table for people). Data
 * only: calling-windows.ts reads it. Engineering, not legal advice.
 *
 * A rule binds the consumer window, since callees may be sole traders whom these laws treat as
 * consumers. Where a state has both a telephone-solicitation window and a stricter one for
 * automatic dialing-announcing devices, the stricter is kept: an AI voice may be read as one.
 */

/** A half-open stretch of local clock time, in minutes after local midnight: [openMinute, closeMinute). */
export interface Period {
  openMinute: number;
  closeMinute: number;
}

/** Whose public holidays (date-holidays, type 'public' only) close a day: a country, or one of its regions. */
export interface HolidaySource {
  country: string;
  state?: string;
}

/** How the text behind a rule was read on `checked`. */
export type Verification =
  /** The statute or regulation itself, on an official or official-mirror site. */
  | 'official_text'
  /** The regulator's or government's own summary of it. */
  | 'official_summary'
  /** The text quoted by secondary sources (law-library mirrors, compliance tables), not the official site. */
  | 'secondary'
  /** Switchboard policy: no statute to read. */
  | 'not_applicable';

/** One legal (or policy) calling window, read in the callee's local time. */
export interface WindowRule {
  id: string;
  /** Open periods by local weekday, index 0 = Sunday … 6 = Saturday; an empty list = closed all day. */
  week: readonly (readonly Period[])[];
  /** A public holiday of any of these closes the whole local day; empty = holidays are ordinary days. */
  holidays: readonly HolidaySource[];
  /** Further days closed every year, 'MM-DD', that date-holidays does not list as public there. */
  alsoClosed: readonly string[];
  /**
   * Fixed clocks (IANA zones) the window is also read in, besides the callee's own: a statute
   * naming "Central Standard Time" is held to both readings (see US-MS).
   */
  alsoReadIn: readonly string[];
  /** 'law' when a statute or regulation sets the window, 'policy' for Switchboard's own rule where none does. */
  basis: 'law' | 'policy';
  /** The provisions the window comes from. */
  citation: string;
  /** Where they were read: URLs, or a description of a source without one. */
  sources: readonly string[];
  verification: Verification;
  /** When the citation and the window were last checked against the sources (YYYY-MM-DD). */
  checked: string;
  /** How the text is read where it leaves room, and what is left out. */
  note?: string;
}

const hm = (hour: number, minute = 0): number => hour * 60 + minute;
const period = (open: number, close: number): Period => ({ openMinute: open, closeMinute: close });

function weekly(days: { weekdays: Period[]; saturday: Period[]; sunday: Period[] }): Period[][] {
  const { weekdays, saturday, sunday } = days;
  return [sunday, weekdays, weekdays, weekdays, weekdays, weekdays, saturday];
}

const daily = (open: number, close: number) => weekly({ weekdays: [period(open, close)], saturday: [period(open, close)], sunday: [period(open, close)] });
const exceptSunday = (open: number, close: number) => weekly({ weekdays: [period(open, close)], saturday: [period(open, close)], sunday: [] });
const weekdaysOnly = (...periods: Period[]) => weekly({ weekdays: periods, saturday: [], sunday: [] });

/** The date every rule below was last checked. */
const CHECKED = '2026-11-25';

type RuleInput = Omit<WindowRule, 'holidays' | 'alsoClosed' | 'alsoReadIn' | 'basis' | 'checked'> &
  Partial<Pick<WindowRule, 'holidays' | 'alsoClosed' | 'alsoReadIn' | 'basis' | 'checked'>>;

function rule(r: RuleInput): WindowRule {
  return { holidays: [], alsoClosed: [], alsoReadIn: [], basis: 'law', checked: CHECKED, ...r };
}

/** Switchboard's own window where no statute sets hours: weekdays 9:00–20:00, never on a national public holiday. */
function policy(country: string): WindowRule {
  return rule({
    id: country,
    week: weekdaysOnly(period(hm(9), hm(20))),
    holidays: [{ country }],
    basis: 'policy',
    citation: `Switchboard policy (no statutory calling hours in ${country})`,
    sources: [],
    verification: 'not_applicable',
    note: 'No hours in law were found; consent rules for automated calls still apply (issue 13 §1).',
  });
}

const CANADA_WEEK = weekly({ weekdays: [period(hm(9), hm(21, 30))], saturday: [period(hm(10), hm(18))], sunday: [period(hm(10), hm(18))] });

/** Every calling window, with its legal source. */
export const WINDOW_RULES = {
  US: rule({
    id: 'US',
    week: daily(hm(8), hm(21)),
    citation: '47 CFR § 64.1200(c)(1); 16 CFR § 310.4(c)',
    sources: ['http://edocket.access.gpo.gov/cfr_2008/octqtr/47cfr64.1200.htm', 'https://saxton.org/tcpa/47CFR64.php'],
    verification: 'secondary',
    note: 'Before 8 a.m. or after 9 p.m. local time at the called party\'s location.',
  }),
  'US-AL': rule({
    id: 'US-AL',
    week: exceptSunday(hm(8), hm(20)),
    holidays: [{ country: 'US', state: 'AL' }],
    citation: 'Ala. Admin. Code r. 770-X-5-.17(1)(b)',
    sources: ['https://d1tvxue8o4w0fl.cloudfront.net/regulation/alabama-administrative-code/title-770-alabama-public-service-commission/chapter-770-x-5-telephone-rules/section-770-x-5-17-live-and-automated-solicitations-and-announcements'],
    verification: 'secondary',
    note: '(1) covers automated solicitation calls: none on Sundays or holidays, none before 8 a.m. or after 8 p.m. "Holidays" read as Alabama\'s state holidays.',
  }),
  'US-LA': rule({
    id: 'US-LA',
    week: exceptSunday(hm(8), hm(20)),
    holidays: [{ country: 'US', state: 'LA' }],
    citation: 'La. R.S. 45:811(2), (3)',
    sources: ['https://lawserver.com/?p=30183792', 'https://lpsc.louisiana.gov/DNC_Emergency'],
    verification: 'secondary',
    note:
      '8:00 a.m.–8:00 p.m. Monday–Saturday, never on a state holiday or Sunday. La. R.S. 45:844.31 (all solicitation banned during a declared state of emergency) is not a window: it is the operator switch of emergency closures.',
  }),
  'US-MS': rule({
    id: 'US-MS',
    week: exceptSunday(hm(8), hm(20)),
    alsoReadIn: ['Etc/GMT+6'],
    citation: 'Miss. Code Ann. § 77-3-723(1)',
    sources: ['https://getpocketlaw.com/law/state_mississippi/section-77-3-723-rules-for-authorized-calls_57b73fa7ff73', 'https://www.dnc.com/blog/no-more-holidays-mississippi-marketers-magnolia-state-lifts-prohibition-telemarketing-legal'],
    verification: 'secondary',
    note:
      '8:00 a.m. to 8:00 p.m. "Central Standard Time", never on a Sunday. Read both ways: the callee\'s clock and a fixed UTC−6 (Etc/GMT+6). In summer that is 9:00 a.m.–8:00 p.m. CDT. The legal-holiday ban was a PSC rule, repealed after 2023 HB 1225.',
  }),
  'US-FL': rule({
    id: 'US-FL',
    week: daily(hm(8), hm(20)),
    citation: 'Fla. Stat. § 501.616(6)(a)',
    sources: ['https://flsenate.gov/Session/Bill/2021/1120/BillText/er/HTML', 'http://www.lawserver.com/law/state/florida/statutes/florida_statutes_501-616'],
    verification: 'official_text',
    note: 'Not before 8 a.m. or after 8 p.m. in the called person\'s time zone (SB 1120, 2021); at most three calls in 24 hours on one subject is a cap (issue 13 §2).',
  }),
  'US-OK': rule({
    id: 'US-OK',
    week: daily(hm(9), hm(20)),
    citation: 'Okla. Stat. tit. 15, § 775C.1 et seq. (Telephone Solicitation Act of 2022); tit. 15, § 755.1(C)(2)(a)',
    sources: ['https://dnc.dreamhosters.com/?p=1309', 'https://lexace.ai/us/statute/oklahoma/15-755.1'],
    verification: 'secondary',
    note: 'The 2022 Act: 8 a.m.–8 p.m. (the section number within 775C was not confirmed). § 755.1: automatic dial announcing devices not before 9 a.m. or after 9 p.m. Both held: 9 a.m.–8 p.m.',
  }),
  'US-MD': rule({
    id: 'US-MD',
    week: daily(hm(8), hm(20)),
    citation: 'Md. Code, Com. Law § 14-4502(c) (Stop the Spam Calls Act, 2023)',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)'],
    verification: 'secondary',
  }),
  'US-MA': rule({
    id: 'US-MA',
    week: daily(hm(8), hm(20)),
    citation: 'M.G.L. c. 159C, § 3; 201 CMR 12.02',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)'],
    verification: 'secondary',
  }),
  'US-MI': rule({
    id: 'US-MI',
    week: daily(hm(9), hm(21)),
    citation: 'MCL 750.540e(1)(f)',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)', 'https://www.compliancepoint.com/marketing-compliance/michigan-mini-tcpa/', 'https://cliclaw.com/legal-compliance/telemarketing/resources/michigan-telemarketing-fraud-mich-comp-laws-%C2%A7-445111-%E2%80%93-%C2%A7'],
    verification: 'secondary',
    checked: '2026-11-27',
    note:
      'Confirmed as the hours source: an unsolicited commercial telephone call received between 9 p.m. and 9 a.m. (§ 750.540e(1)(f), the Penal Code\'s malicious use of telecommunications services, which compliance compilations list beside the Home Solicitation Sales Act, MCL 445.111 to 445.117). The Home Solicitation Sales Act itself (445.111a, 445.111b) sets no hours. § 540e requires intent to annoy, so applying it to every call is the conservative reading. Read through secondary sources only.',
  }),
  'US-MN': rule({
    id: 'US-MN',
    week: daily(hm(9), hm(21)),
    citation: 'Minn. Stat. § 325E.30',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)', 'http://www.ag.state.mn.us/Consumer/Utilities/AutoDialingDeviceLaw.asp', 'https://revisor.mn.gov/statutes/2023/cite/325E/full'],
    verification: 'secondary',
    checked: '2026-11-27',
    note:
      'Corrected reading: § 325E.30 is the time-of-day limit of the automatic dialing-announcing device sections (§§ 325E.26 to 325E.31: .27 is the consent rule, now in the consent table), not a rule for every telephone solicitation: no ADAD call before 9 a.m. or after 9 p.m. Every call of the service is read as an ADAD call, so it applies. The section number is from the Attorney General\'s ADAD page and a compliance table; the official text was not read (unsure).',
  }),
  'US-NM': rule({
    id: 'US-NM',
    week: daily(hm(9), hm(21)),
    citation: 'N.M. Stat. § 57-12-22(B)(5)',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)'],
    verification: 'secondary',
  }),
  'US-KY': rule({
    id: 'US-KY',
    week: daily(hm(10), hm(21)),
    citation: 'KRS 367.46955(16)',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)', 'https://lawserver.com/law/state/kentucky/ks-statutes/kentucky_statutes_367-46955'],
    verification: 'secondary',
    note:
      'Found: no solicitation to a residence outside 10 a.m.–9 p.m. local time (subsection (16) as quoted by two independent compliance tables; the official text was not read). The former citation named subsection (15). KRS 367.461(2)(e) (automated calling equipment, 8 a.m.–9 p.m.) is wider.',
  }),
  'US-NV': rule({
    id: 'US-NV',
    week: daily(hm(9), hm(21)),
    citation: 'NRS 597.814(2)(a)',
    sources: ['http://www.contactcentercompliance.com/legal/statutes/NV/NRS/597.814.adpx'],
    verification: 'secondary',
    note:
      'Found: a device for automatic dialing and announcing may not place a call received in Nevada between 9 p.m. and 9 a.m. Applied to AI-voice calls. The former rule (NRS 228.590, 9 a.m.–8 p.m.) could not be found: NRS 228.590 concerns the do-not-call registry.',
  }),
  'US-CT': rule({
    id: 'US-CT',
    week: daily(hm(9), hm(20)),
    citation: 'Conn. Gen. Stat. § 42-288a(c)',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)'],
    verification: 'secondary',
  }),
  'US-TX': rule({
    id: 'US-TX',
    week: weekly({ weekdays: [period(hm(9), hm(21))], saturday: [period(hm(9), hm(21))], sunday: [period(hm(12), hm(21))] }),
    citation: 'Tex. Bus. & Com. Code § 301.051(b)',
    sources: ['public compliance table quoting the text (GitHub: lib/sales/callingRules.js)', 'http://law.justia.com/codes/texas/2005/bc/004.00.000037.00.html'],
    verification: 'secondary',
    note:
      'Found: no consumer telephone call before 9 a.m. or after 9 p.m. on a weekday or Saturday, or before noon or after 9 p.m. on a Sunday (recodified from former § 37.02, "permissible hours"; the 2005 text of § 37.02 was seen, the hours clause of § 301.051 only as quoted by secondary sources).',
  }),
  'US-RI': rule({
    id: 'US-RI',
    week: weekly({ weekdays: [period(hm(9), hm(18))], saturday: [period(hm(10), hm(17))], sunday: [] }),
    holidays: [{ country: 'US', state: 'RI' }],
    citation: 'R.I. Gen. Laws § 5-61-3.6; § 5-61-2 ("hours of operation")',
    sources: ['http://webserver.rilin.state.ri.us/Statutes/TITLE5/5-61/5-61-3.6.HTM', 'https://instalawyer.io/laws/rhode-island-general-laws/section-5-61-2-definitions'],
    verification: 'official_text',
    note: 'Monday–Friday except a state or federal holiday 9:00–18:00; Saturday 10:00–17:00. A holiday on a Saturday is closed too (conservative).',
  }),
  'US-UT': rule({
    id: 'US-UT',
    week: exceptSunday(hm(8), hm(21)),
    holidays: [{ country: 'US', state: 'UT' }],
    citation: 'Utah Code § 13-25a-103(3)',
    sources: ['https://codes.findlaw.com/ut/title-13-commerce-and-trade/ut-code-sect-13-25a-103/'],
    verification: 'secondary',
    note: 'Not between 9 p.m. and 8 a.m., not on a Sunday, not on a legal holiday.',
  }),
  'US-PA': rule({
    id: 'US-PA',
    week: exceptSunday(hm(9), hm(19)),
    holidays: [{ country: 'US', state: 'PA' }],
    citation: '73 P.S. § 2245(a)(1) as amended by SB 992 of the 2025–2026 session (act number not confirmed); § 2245(a)(10) (legal holidays, Act 73 of 2019, HB 318)',
    sources: [
      'https://govt.westlaw.com/pac/Document/NE4CC77F0E9F711E9BEFE89A994168F89',
      'https://www.jenkinslaw.org/blog/2019/12/03/amendments-pennsylvanias-telemarketer-registration-act-effective-today',
      'https://www.pasenategop.com/news/brooks-bill-to-strengthen-protections-against-telemarketers-passes-senate',
    ],
    verification: 'secondary',
    checked: '2026-11-27',
    note:
      '(a)(1) barred telemarketing after 9 p.m. or before 8 a.m. (official text, as of 2019). SB 992 (2025–2026) bars it on Sundays and after 7 p.m. or before 9 a.m. (its sponsor\'s release on its Senate passage); the former citation "Act 47 of 2026" and the date in force (about 2026-10-18) could not be confirmed, nor the enrolled text read. The stricter hours are kept: wrong only by calling less.',
  }),
  'US-WA': rule({
    id: 'US-WA',
    week: daily(hm(8), hm(20)),
    citation: 'RCW 19.158.040(2)',
    sources: ['https://app.leg.wa.gov/RCW/default.aspx?cite=19.158.040'],
    verification: 'official_text',
    note: 'No call received before 8:00 a.m. or after 8:00 p.m. at the recipient\'s local time.',
  }),
  'US-ME': rule({
    id: 'US-ME',
    week: weekdaysOnly(period(hm(9), hm(17))),
    citation: '10 M.R.S. § 1498(3)',
    sources: ['https://legislature.maine.gov/legis/bills/bills_121st/billtexts/LD039201-1.asp'],
    verification: 'secondary',
    checked: '2026-11-27',
    note:
      'An automated telephone calling device may make solicitation calls only on weekdays between 9 a.m. and 5 p.m. (the time in Maine). Every call of the service is read as such a call (AI voice, dialled automatically). Text read as quoted in LD 392 (121st Legislature); state holidays are not named and not closed.',
  }),
  CA: rule({
    id: 'CA',
    week: CANADA_WEEK,
    citation: 'CRTC Unsolicited Telecommunications Rules, Part III (Telemarketing Rules)',
    sources: ['https://crtc.gc.ca/eng/phone/telemarketing/tobligations/rules-regles.htm', 'http://www.crtc.gc.ca/eng/trules-reglest.htm'],
    verification: 'official_summary',
    note: 'Weekdays 9:00 a.m.–9:30 p.m., weekends 10:00 a.m.–6:00 p.m., callee\'s local time; the rules name no holidays. The section number within Part III was not confirmed.',
  }),
  'CA-BC': rule({
    id: 'CA-BC',
    week: CANADA_WEEK,
    holidays: [{ country: 'CA', state: 'BC' }],
    alsoClosed: ['09-30', '12-26'],
    citation: 'Telemarketer Licensing Regulation (B.C., under the Business Practices and Consumer Protection Act)',
    sources: ['https://consumerprotectionbc.ca/2011/07/everything-you-wanted-to-know-about-telemarketers', 'https://www.consumerprotectionbc.ca/2014/08/looking-for-some-telemarketing-tips/'],
    verification: 'official_summary',
    note:
      'No calls on statutory holidays; weekdays 9:00 a.m.–9:30 p.m., weekends 10:00 a.m.–6:00 p.m. Holidays: date-holidays\' BC public days, plus 30 September (a BC statutory holiday since 2023, an observance in date-holidays) and Boxing Day. Easter Monday is not modelled. The regulation\'s section number was not confirmed.',
  }),
  AU: rule({
    id: 'AU',
    week: weekly({ weekdays: [period(hm(9), hm(20))], saturday: [period(hm(9), hm(17))], sunday: [] }),
    holidays: [{ country: 'AU' }],
    citation: 'Telecommunications (Telemarketing and Research Calls) Industry Standard 2017 (calling times)',
    sources: ['https://www.donotcall.gov.au/consumers/consumer-overview/industry-standards/'],
    verification: 'official_summary',
    note: 'Weekdays 9 a.m.–8 p.m., Saturday 9 a.m.–5 p.m., never Sunday or a national public holiday. State-only public holidays are not modelled.',
  }),
  FR: rule({
    id: 'FR',
    week: weekdaysOnly(period(hm(10), hm(13)), period(hm(14), hm(20))),
    holidays: [{ country: 'FR' }],
    citation: 'Code de la consommation art. D223-9 (Décret n° 2022-1313); jours fériés per Code du travail art. L3133-1',
    sources: ['https://www.legifrance.gouv.fr/jorf/id/JORFTEXT000046421823', 'https://www.legifrance.gouv.fr/codes/id/LEGISCTA000033008129/'],
    verification: 'official_text',
    note:
      'Monday–Friday 10:00–13:00 and 14:00–20:00 in the consumer\'s time zone, except the eleven fêtes légales of L3133-1 (date-holidays\' FR public days; their lists were compared). Alsace-Moselle\'s extra days are not modelled.',
  }),
  ES: rule({
    id: 'ES',
    week: weekdaysOnly(period(hm(9), hm(21))),
    holidays: [{ country: 'ES' }],
    citation: 'Real Decreto Legislativo 1/2007 (TRLGDCU) art. 96.2, as amended by Ley 4/2022',
    sources: ['https://www.genbeta.com/actualidad/llamadas-comerciales-ilegales-a-partir-hora-asi-puedes-actuar-recibes', 'https://xatakamovil.com/movil-y-sociedad/llamadas-comerciales-a-deshora-este-horario-fijado-ley'],
    verification: 'secondary',
    note:
      'Not before 9:00 nor after 21:00, nor on festivos or weekends. Festivos: national and, from the number\'s province, regional (date-holidays ES regions); a mobile is held to every region\'s. Local holidays are not modelled.',
  }),
  GB: policy('GB'),
  IE: policy('IE'),
  DE: policy('DE'),
  NL: policy('NL'),
} as const satisfies Record<string, WindowRule>;

/**
 * Rules found in no primary or secondary source and removed, kept here so the removal is
 * visible: none today (Michigan, Minnesota, Kentucky, Nevada and Texas were each found; their
 * notes say where and what changed).
 */
export const REMOVED_RULES: readonly { id: string; was: string; why: string }[] = [];
