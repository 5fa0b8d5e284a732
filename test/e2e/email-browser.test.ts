/**
 * Every email template viewed as a mail client shows it: in Debian's chromium at 600 px, served by
 * a tiny local server. Each is screenshotted into test-results/emails/ (git-ignored), loads without
 * console errors, has no horizontal scroll, and passes axe-core with no serious or critical
 * violation. The reseller-behalf email is viewed in each of its languages.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import axe from 'axe-core';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { composeEmail, type ComposeInput } from '../../email/compose.ts';
import { balanceLowData, composeInput as base, onboardingInput as onboarding } from '../helpers/email-fixtures.ts';
import { HIDDEN_NAMES } from '../helpers/site-facts.ts';
import { namesSupplier } from '../../actors/shared/output-filter.ts';

const OUT = path.join(process.cwd(), 'test-results', 'emails');
const WIDTH = 600;

const EMAILS: Record<string, ComposeInput> = {
  console_invitation: base(
    'console_invitation',
    { account_name: 'Harbourline Leads LLC', role: 'billing', invited_by: 'Ada Lovelace', expires_at: '2026-12-04T10:00:00.000Z' },
    { secret: 'https://console.switchboard.example/console/invitations/accept?token=0123456789abcdefghijklmnopqrstuvwxyz' },
  ),
  password_reset: base('password_reset', { expires_at: '2026-11-27T13:00:00.000Z' }, { secret: 'https://console.switchboard.example/console/reset?token=0123456789abcdefghijklmnopqrstuvwxyz' }),
  balance_low: base('balance_low', balanceLowData(123456, 'below_25_percent')),
  auto_top_up_failed: base('auto_top_up_failed', {
    card_payment_id: 'cp1',
    amount_cents: 500000,
    threshold_cents: 100000,
    code: 'authentication_required',
    message: 'This payment requires authentication by the card holder.',
    card_brand: 'visa',
    card_last4: '3155',
    retry_after: '2026-11-28T12:00:00.000Z',
  }),
  number_payment_due: base('number_payment_due', { phone_number: '+14155550123', monthly_cents: 115, renews_on: '2026-12-01', release_due_on: '2026-12-15', event_id: 'evt_3' }),
  website_hosting_due: base('website_hosting_due', { domain: 'bright-dental.example', hosting_cents_per_month: 1900, hosting_renews_on: '2026-12-01', suspend_due_on: '2026-12-15', event_id: 'evt_5' }),
  'onboarding_link-en': onboarding('en-US'),
  'onboarding_link-es': onboarding('es-ES'),
  'onboarding_link-fr': onboarding('fr-FR'),
  'onboarding_link-de': onboarding('de-DE'),
};

let browser: Browser;
let server: http.Server;
let origin = '';

test.before(async () => {
  const html = new Map<string, string>();
  for (const [name, input] of Object.entries(EMAILS)) html.set(`/${name}`, (await composeEmail(input)).html);
  server = http.createServer((req, res) => {
    const page = html.get(req.url ?? '');
    if (page) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    else if (req.url === '/favicon.ico') res.writeHead(204).end(); // asked for by the browser, not by the email
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await fs.mkdir(OUT, { recursive: true });
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close().catch(() => {});
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

for (const name of Object.keys(EMAILS)) {
  test.serial(`${name} at ${WIDTH} px: screenshot, no console error, no horizontal scroll, no serious axe violation`, async (t) => {
    const context = await browser.newContext({ viewport: { width: WIDTH, height: 900 }, bypassCSP: true });
    t.teardown(() => context.close());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));

    const response = await page.goto(`${origin}/${name}`, { waitUntil: 'load' });
    t.is(response?.status(), 200);
    const file = path.join(OUT, `${name}-${WIDTH}.png`);
    await page.screenshot({ path: file, fullPage: true });
    const png = await fs.readFile(file);
    t.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
    t.deepEqual(errors, []);

    // Runs in the page (this file is type-checked without the DOM library).
    const { scrollWidth, clientWidth } = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return { scrollWidth: root.scrollWidth as number, clientWidth: root.clientWidth as number };
    });
    t.true(scrollWidth <= clientWidth, `no horizontal scroll: ${scrollWidth} > ${clientWidth}`);
    t.is(await page.locator('h1').count(), 1);
    t.true(await page.locator('a', { hasText: /\S/ }).first().isVisible(), 'its call to action shows');
    if (name.startsWith('onboarding_link')) {
      const text = await page.locator('body').innerText();
      t.notRegex(text, HIDDEN_NAMES);
      t.false(namesSupplier(text));
    }

    await page.addScriptTag({ content: axe.source });
    const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run());
    const serious = results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
    t.deepEqual(serious, []);
    t.log(`${name}: ${png.length} bytes PNG, axe: ${results.violations.length} violations (${results.violations.map((v) => `${v.id}/${v.impact}`).join(', ') || 'none'})`);
  });
}
