import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';

/**
 * The onboarding page a reseller's customer opens is written in the customer's calling language
 * (issue 20 §4: a French customer's page was English, `lang="en"`), for the five languages
 * customers' sites have words for; the reseller's own words (brand and business names) are shown
 * as given. Its text on the brand's colours is black or white by WCAG contrast (AA 4.5:1).
 */
let svc: TestService;
let account: TestAccount;
test.before(async () => {
  svc = await startTestService();
  account = await makeAccount(svc.url);
  const brand = await account.api.patch('/v1/brand', { display_name: 'Northwind Appels', primary_color: '#1e3a8a', accent_color: '#f59e0b', support_email: 'aide@northwind.example' });
  if (brand.status !== 200) throw new Error(brand.text);
});
test.after.always(async () => {
  await svc?.stop();
});

const form = (fields: Record<string, string>) => ({
  rawBody: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

async function pageFor(country: string, name: string) {
  const customer = await makeCustomer(account.api, { country, name, ...(country === 'US' ? { timezone: 'America/New_York' } : {}) });
  const link = await account.api.post(`/v1/customers/${customer.id}/onboarding_link`);
  const path = new URL(link.body.url).pathname;
  return { path, page: await call(svc.url, 'GET', path) };
}

const cases: [country: string, lang: string, heading: RegExp, button: RegExp, support: RegExp][] = [
  ['FR', 'fr', /Conditions d’appel pour Boulangerie Éclair/, /Accepter les conditions/, /Des questions\u00a0\? Écrivez à/],
  ['DE', 'de', /Bedingungen für Anrufe im Auftrag von Boulangerie Éclair/, /Bedingungen annehmen/, /Fragen\? Schreiben Sie an/],
  ['ES', 'es', /Condiciones de llamada para Boulangerie Éclair/, /Aceptar las condiciones/, /¿Preguntas\? Escriba a/],
  ['NL', 'nl', /Belvoorwaarden voor Boulangerie Éclair/, /Voorwaarden accepteren/, /Vragen\? Schrijf naar/],
  ['US', 'en', /Calling terms for Boulangerie Éclair/, /Accept the terms/, /Questions\? Write to/],
];
for (const [country, lang, heading, button, support] of cases) {
  test(`a ${country} customer's onboarding page is in ${lang}, with the reseller's names as given`, async (t) => {
    const { page } = await pageFor(country, 'Boulangerie Éclair');
    t.is(page.status, 200);
    t.regex(page.text, new RegExp(`<html lang="${lang}">`));
    t.regex(page.text, heading);
    t.regex(page.text, button);
    t.regex(page.text, support);
    t.regex(page.text, /Northwind Appels/, 'the brand name as the reseller wrote it');
    if (lang !== 'en') t.notRegex(page.text, /Calling terms|Accept the terms|Your full name|Questions\?/, 'no English left');
  });
}

test('a French customer gets French for the refusal, the thanks, and a link already used', async (t) => {
  const { path } = await pageFor('FR', 'Fromagerie Dupont');
  const almost = await call(svc.url, 'POST', path, form({ accepted_by: '', agree: 'yes' }));
  t.is(almost.status, 400);
  t.regex(almost.text, /<html lang="fr">/);
  t.regex(almost.text, /Presque terminé/);
  const done = await call(svc.url, 'POST', path, form({ accepted_by: 'Marie Curie', agree: 'yes' }));
  t.is(done.status, 200);
  t.regex(done.text, /Merci, Marie Curie/);
  t.regex(done.text, /Les conditions d’appel sont acceptées pour Fromagerie Dupont/);
  const again = await call(svc.url, 'GET', path);
  t.regex(again.text, /Ces conditions ont été acceptées par Marie Curie le \d{4}-\d\d-\d\d/);
  t.regex(again.text, /<html lang="fr">/);
});

test('text on the brand colours is black on amber #f59e0b and white on navy #1e3a8a', async (t) => {
  const { page } = await pageFor('US', 'Amber Dental');
  t.regex(page.text, /--accent: #f59e0b; /);
  t.regex(page.text, /--on-accent: #000000;/, 'black on the light accent (white would be 2.15:1, under 4.5:1)');
  t.regex(page.text, /--on-primary: #ffffff;/, 'white on the dark primary');
  t.regex(page.text, /button \{[^}]*background: var\(--accent\); color: var\(--on-accent\)/);
  t.regex(page.text, /header \{[^}]*background: var\(--primary\); color: var\(--on-primary\)/);
});

test("the chat page's read gives the customer's calling language and the text colours on the brand's", async (t) => {
  const customer = await makeCustomer(account.api, { country: 'FR', name: 'Fromagerie Martin' });
  const minted = await account.api.post(`/v1/customers/${customer.id}/sessions`, { end_user_ref: 'rep-1' });
  t.is(minted.status, 201, minted.text);
  const context = await call(svc.url, 'GET', '/v1/chat/session', { key: minted.body.token });
  t.is(context.status, 200, context.text);
  t.is(context.body.calling_language, 'fr-FR');
  t.like(context.body.brand, { accent_color: '#f59e0b', text_on_accent_color: '#000000', primary_color: '#1e3a8a', text_on_primary_color: '#ffffff' });
  const chatPage = await call(svc.url, 'GET', '/chat');
  t.regex(chatPage.text, /#thread li\.user \{[^}]*background: var\(--accent\); color: var\(--on-accent\)/);
  t.regex(chatPage.text, /"fr":\{"title":"Coach commercial"/, 'the page carries French words');
});
