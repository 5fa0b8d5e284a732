/**
 * Site facts for the websites page tests: a rich customer (research found everything) and a bare
 * one (a name, a number and a two-line brief), in either mode. Numbers are from Ofcom's drama
 * range (01134960xxx), so no real business is ever dialled from a screenshot.
 */
import type { SiteFacts, SiteResearch } from '../../actors/websites/site-facts.ts';

export const RICH_RESEARCH: SiteResearch = {
  title: 'Leeds Plumbing & Heating | Emergency plumber in Leeds',
  description: 'Family-run plumbers serving Leeds since 1998. Boiler repairs, bathroom fitting and 24-hour emergency call-outs, with fixed prices agreed before we start.',
  services: ['Boiler repair and servicing', 'Bathroom fitting', 'Emergency call-outs', 'Central heating', 'Leak detection', 'Landlord gas safety certificates'],
  phones: ['+441134960123'],
  emails: ['hello@leedsplumbing.example'],
  address: '12 Kirkgate, Leeds LS1 6BY',
  openingHours: ['Mo-Fr 08:00-18:00', 'Sa 09:00-13:00', 'Sunday: emergencies only'],
};

export function richFacts(over: Partial<SiteFacts> = {}): SiteFacts {
  return {
    businessName: 'Leeds Plumbing & Heating Ltd',
    brandName: 'Leeds Plumbing & Heating',
    country: 'GB',
    locale: 'en-GB',
    phoneE164: '+441134960123',
    brief: 'Family business, three generations. Mention that quotes are free and that they cover all of West Yorkshire.',
    research: RICH_RESEARCH,
    resellerName: 'Northwind Calls',
    mode: 'live',
    ...over,
  };
}

export function bareFacts(over: Partial<SiteFacts> = {}): SiteFacts {
  return {
    businessName: 'Harbour Dental',
    brandName: null,
    country: 'GB',
    locale: 'en-GB',
    phoneE164: '+441134960999',
    brief: 'A small dental practice by the harbour. Check-ups, hygiene appointments and emergency dental care.',
    research: null,
    resellerName: 'Northwind Calls',
    mode: 'live',
    ...over,
  };
}

/** Names a page must never show: the service, its suppliers, the reseller in these facts. */
export const HIDDEN_NAMES = /switchboard|twilio|openai|chatgpt|northwind/i;
