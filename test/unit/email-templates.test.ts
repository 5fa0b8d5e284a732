import test from 'ava';
import { composeEmail, EmailNotSendable } from '../../email/compose.ts';
import type { EmailKind } from '../../runtime/types.ts';
import { contrastRatio } from '../../actors/shared/contrast.ts';
import { namesSupplier } from '../../actors/shared/output-filter.ts';
import type { EmailAccount } from '../../db/email-outbox.ts';
import { balanceLowData, composeInput, HARBOURLINE as ACCOUNT, onboardingInput } from '../helpers/email-fixtures.ts';
import { HIDDEN_NAMES } from '../helpers/site-facts.ts';

/**
 * The templates: each kind's subject, both parts and its sender; the reseller-behalf email in its
 * brand and the customer's language, naming neither the service (nor the platform's configured
 * name) nor any supplier: the forbidden words of the customer-facing pages (output-filter's list).
 */

const PLATFORM = { name: 'Acme Voice', from: 'no-reply@acme-voice.example', publicUrl: 'https://console.acme-voice.example' };
const HIDDEN = /switchboard|acme[\s-]?voice/i;

const input = (kind: EmailKind, data: Record<string, unknown>, over: Parameters<typeof composeInput>[2] = {}) => composeInput(kind, data, { platform: PLATFORM, ...over });
const onboarding = (language: string, account: EmailAccount = ACCOUNT) => composeEmail(onboardingInput(language, { platform: PLATFORM, account }));

const EXPECTED: Record<string, { lang: string; subject: string; words: RegExp }> = {
  en: { lang: 'en', subject: 'Please accept the calling terms for Bright Dental', words: /Harbourline will make calls on behalf of Bright Dental\..*27 December 2026/s },
  'es-ES': { lang: 'es', subject: 'Acepte las condiciones de llamada para Bright Dental', words: /Harbourline realizará llamadas en nombre de Bright Dental\..*27 de diciembre de 2026/s },
  'fr-FR': { lang: 'fr', subject: 'Veuillez accepter les conditions d’appel pour Bright Dental', words: /Harbourline passera des appels pour le compte de Bright Dental\..*27 décembre 2026/s },
  'de-DE': { lang: 'de', subject: 'Bitte nehmen Sie die Bedingungen für Anrufe für Bright Dental an', words: /Harbourline wird im Auftrag von Bright Dental Anrufe tätigen\..*27\. Dezember 2026/s },
  'pt-BR': { lang: 'en', subject: 'Please accept the calling terms for Bright Dental', words: /Harbourline will make calls on behalf of Bright Dental/ },
};

for (const [language, expected] of Object.entries(EXPECTED)) {
  test(`onboarding link (${language}): in the customer's language and the reseller's brand, naming neither the service nor a supplier`, async (t) => {
    const m = await onboarding(language);
    t.is(m.subject, expected.subject);
    t.regex(m.html, new RegExp(`<html[^>]*lang="${expected.lang}"`));
    t.regex(m.text, expected.words);
    t.regex(m.text, /https:\/\/calls\.harbourline\.example\/onboarding\/ob_0123456789abcdefghijklmnopqrst012345/);
    t.regex(m.text, /help@harbourline\.example/);
    t.deepEqual(m.from, { name: 'Harbourline Team', address: PLATFORM.from });
    t.deepEqual(m.replyTo, { name: 'Harbourline Team', address: 'help@harbourline.example' });
    t.is(m.messageId, '<0b0c6a52-7d0c-4a53-9b8f-1a2b3c4d5e6f@acme-voice.example>');
    for (const [part, value] of Object.entries({ subject: m.subject, html: m.html, text: m.text, from: m.from.name })) {
      t.notRegex(value, HIDDEN, `${part} names the service`);
      t.notRegex(value, HIDDEN_NAMES, `${part} shows a name the customers' pages never show`);
      t.false(namesSupplier(value), `${part} names a supplier`);
    }
  });
}

test("onboarding link: the brand's colours carry text that reaches WCAG AA, its logo replaces its name", async (t) => {
  const m = await onboarding('en');
  t.regex(m.html, /background-color:#ffcc00[^"]*"><tbody><tr><td><p style="[^"]*color:#000000/, 'black on the yellow band');
  t.regex(m.html, /background-color:#0a3d62;color:#ffffff/, 'white on the dark button');
  t.true(contrastRatio('#0a3d62', '#ffffff') >= 4.5);
  const logo = await onboarding('en', { ...ACCOUNT, logo_url: 'https://cdn.harbourline.example/logo.png' });
  t.regex(logo.html, /<img alt="Harbourline"[^>]*src="https:\/\/cdn\.harbourline\.example\/logo\.png"/);
  // No brand at all: the account's name, the house's neutral colours, no Reply-To.
  const bare = await onboarding('en', { ...ACCOUNT, display_name: null, email_from_name: null, support_email: null, primary_color: null, accent_color: null });
  t.deepEqual(bare.from.name, 'Harbourline Leads LLC');
  t.is(bare.replyTo, null);
  t.regex(bare.text, /Harbourline Leads LLC will make calls/);
  // A support address that is not a plain address is never a Reply-To.
  const odd = await onboarding('en', { ...ACCOUNT, support_email: 'help@harbourline.example\u0001' });
  t.is(odd.replyTo, null);
});

const PLATFORM_KINDS: { kind: EmailKind; data: Record<string, unknown>; secret?: string; subject: string; text: RegExp[] }[] = [
  {
    kind: 'console_invitation',
    data: { account_name: 'Harbourline Leads LLC', role: 'billing', invited_by: 'Ada Lovelace', expires_at: '2026-12-04T10:00:00.000Z' },
    secret: 'https://console.acme-voice.example/console/invitations/accept?token=t1',
    subject: 'You are invited to Harbourline Leads LLC on Acme Voice',
    text: [/Ada Lovelace invited you to join Harbourline Leads LLC on Acme Voice with the billing role/, /token=t1/, /4 December 2026 at 10:00 UTC/],
  },
  {
    kind: 'password_reset',
    data: { expires_at: '2026-11-27T13:00:00.000Z' },
    secret: 'https://console.acme-voice.example/console/reset?token=r1',
    subject: 'Reset your Acme Voice password',
    text: [/token=r1/, /27 November 2026 at 13:00 UTC/],
  },
  {
    kind: 'balance_low',
    // The data a real balance.low event carries (the balance view): the minutes estimate is under `rates`.
    data: balanceLowData(123456, 'below_10_percent'),
    subject: 'Harbourline Leads LLC: balance below 10 % ($1,234.56 available)',
    text: [/Available balance: \$1,234\.56/, /Estimated call minutes left: 6303(?!\d)/, /console\/billing\?mode=live/],
  },
  {
    kind: 'balance_low',
    data: balanceLowData(150, 'zero', { auto_top_up: { threshold_cents: 1000, amount_cents: 5000 } }),
    subject: 'Harbourline Leads LLC: no new call can start ($1.50 available)',
    text: [/no new call can start/, /Estimated call minutes left: 7(?!\d)/, /Automatic top-up is on: \$50\.00/],
  },
  {
    kind: 'auto_top_up_failed',
    data: { card_payment_id: 'cp1', amount_cents: 500000, threshold_cents: 100000, code: 'card_declined', message: 'Your card has insufficient funds.', card_brand: 'visa', card_last4: '9995', retry_after: '2026-11-28T12:00:00.000Z' },
    subject: 'Harbourline Leads LLC: automatic top-up of $5,000.00 failed',
    text: [/Amount: \$5,000\.00/, /Card: Visa ending 9995/, /Reason: Your card has insufficient funds\./, /Threshold: \$1,000\.00/, /28 November 2026 at 12:00 UTC/],
  },
  {
    kind: 'number_payment_due',
    data: { object: 'number', phone_number: '+14155550123', monthly_cents: 115, renews_on: '2026-12-01', release_due_on: null, event_id: 'evt_3' },
    subject: 'Harbourline Leads LLC: the rent of +14155550123 is due on 1 December 2026',
    text: [/Monthly rent: \$1\.15/],
  },
  {
    kind: 'number_payment_due',
    data: { object: 'number', phone_number: '+14155550123', monthly_cents: 115, renews_on: '2026-12-01', release_due_on: '2026-12-15', event_id: 'evt_4' },
    subject: 'Harbourline Leads LLC: +14155550123 will be released on 15 December 2026 unless its rent is paid',
    text: [/Released on: 15 December 2026/],
  },
  {
    kind: 'website_hosting_due',
    data: { object: 'website_build', domain: 'bright-dental.example', url: 'https://bright-dental.example', hosting_cents_per_month: 1900, hosting_renews_on: '2026-12-01', suspend_due_on: '2026-12-15', event_id: 'evt_5' },
    subject: 'Harbourline Leads LLC: hosting of bright-dental.example is due; the site goes offline on 15 December 2026 unless it is paid',
    text: [/Monthly hosting: \$19\.00/, /Goes offline on: 15 December 2026/],
  },
];

for (const c of PLATFORM_KINDS) {
  test(`${c.kind}: the platform's own email, HTML and text, from the platform's name — ${c.subject}`, async (t) => {
    const m = await composeEmail(input(c.kind, c.data, { secret: c.secret ?? null }));
    t.is(m.subject, c.subject);
    t.deepEqual(m.from, { name: 'Acme Voice', address: PLATFORM.from });
    t.is(m.replyTo, null);
    t.regex(m.html, /^<!DOCTYPE html/);
    t.regex(m.html, /<html[^>]*lang="en"/);
    t.regex(m.html, new RegExp(`<title>${c.subject.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/'/g, '&#x27;')}</title>`));
    for (const re of c.text) {
      t.regex(m.text, re);
      t.regex(m.html.replace(/<[^>]+>/g, ''), new RegExp(re.source.replace(/: /g, ':\\s*')), `the HTML says it too: ${re}`);
    }
    t.false(namesSupplier(m.text), 'no supplier');
  });
}

test('an email that needs a link and has none is never sent', async (t) => {
  for (const kind of ['console_invitation', 'password_reset', 'onboarding_link'] as const) {
    await t.throwsAsync(composeEmail(input(kind, {})), { instanceOf: EmailNotSendable });
  }
});
