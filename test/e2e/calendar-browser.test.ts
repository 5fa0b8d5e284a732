/**
 * The calendar link's page (issue 24) in a real browser (Debian's chromium via playwright-core)
 * against the service in this process: a reseller's brand, a test customer connecting the test
 * calendar, a live customer's calendar address form with a refusal shown in place, and a French
 * customer's page in French. Each page is screenshotted at 1280 and 375 px, logs no console
 * error, has no horizontal scroll, names no supplier, and passes axe-core with no serious or
 * critical violation.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import axe from 'axe-core';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { mintCalendarLink } from '../helpers/calendar.ts';
import type { Client } from '../helpers/http.ts';

const WIDTHS = [1280, 375];
const BRAND = { display_name: 'Northwind Calls', primary_color: '#123456', accent_color: '#b45309' };
/** Names the white-label page must never show (Google Calendar and Microsoft 365 are the customer's own choices, offered only when configured). */
const HIDDEN_NAMES = /switchboard|twilio|openai|radicale|tsdav/i;

let svc: TestService;
let browser: Browser;
let shots = '';
let account: TestAccount & { liveApi?: Client };

test.before(async () => {
  const [started, launched] = await Promise.allSettled([startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000' }), launchChromium()]);
  if (launched.status === 'fulfilled') browser = launched.value;
  if (started.status === 'fulfilled') svc = started.value;
  if (started.status === 'rejected') throw started.reason;
  if (launched.status === 'rejected') throw launched.reason;
  account = await makeAccount(svc.url, { live: true });
  for (const api of [account.api, account.liveApi!]) {
    const brand = await api.patch('/v1/brand', BRAND);
    if (brand.status !== 200) throw new Error(`brand: ${brand.status} ${brand.text}`);
  }
  shots = await fs.mkdtemp(path.join(os.tmpdir(), 'calendar-page-shots-'));
  if (process.env.KEEP_SHOTS) console.log(`screenshots in ${shots}`);
});

test.after.always(async () => {
  await browser?.close().catch(() => {});
  await svc?.stop();
  if (shots && !process.env.KEEP_SHOTS) await fs.rm(shots, { recursive: true, force: true });
});

async function seriousAxeViolations(t: ExecutionContext, page: Page, label: string): Promise<string[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run());
  t.log(`${label}: axe ${results.violations.length} violations (${results.violations.map((v) => `${v.id}/${v.impact}`).join(', ') || 'none'})`);
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

async function open(t: ExecutionContext, url: string, width: number) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  const response = await page.goto(url, { waitUntil: 'load' });
  return { page, response, errors };
}

/** Screenshot, no console error, no horizontal scroll, no supplier named, axe clean. */
async function checkPage(t: ExecutionContext, page: Page, errors: string[], label: string) {
  const file = path.join(shots, `${label}.png`);
  await page.screenshot({ path: file, fullPage: true });
  const png = await fs.readFile(file);
  t.true(png.length > 1000, 'a real screenshot');
  t.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  t.deepEqual(errors.filter((e) => !/Failed to load resource: the server responded with a status of (400|422)/.test(e)), [], 'no console error');
  const { scrollWidth, clientWidth } = await page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return { scrollWidth: root.scrollWidth as number, clientWidth: root.clientWidth as number };
  });
  t.true(scrollWidth <= clientWidth, `no horizontal scroll: ${scrollWidth} > ${clientWidth}`);
  const text = await page.locator('body').innerText();
  t.notRegex(text, HIDDEN_NAMES);
  t.notRegex(await page.content(), HIDDEN_NAMES, 'not in the markup either');
  t.regex(text, /Northwind Calls/, "the reseller's brand");
  t.deepEqual(await seriousAxeViolations(t, page, label), []);
}

for (const width of WIDTHS) {
  test.serial(`a test customer connects the test calendar at ${width} px`, async (t) => {
    const c = await makeCustomer(account.api, { name: 'Bright Dental' });
    const url = await mintCalendarLink(account.api, c.id);
    const { page, response, errors } = await open(t, url, width);
    t.is(response?.status(), 200);
    t.regex(await page.locator('h2').innerText(), /Connect the calendar of Bright Dental/);
    t.true(await page.getByText('test mode uses a simulated calendar').isVisible());
    await checkPage(t, page, errors, `test-${width}`);

    await page.getByRole('button', { name: 'Connect the test calendar' }).click();
    await page.getByRole('heading', { name: 'Your calendar is connected' }).waitFor({ timeout: 15_000 });
    t.regex(await page.locator('.connected').innerText(), /Test calendar/);
    await checkPage(t, page, errors, `test-done-${width}`);
    t.is((await account.api.get(`/v1/customers/${c.id}/calendar`)).body.status, 'working');
  });

  test.serial(`a live customer's calendar address form, and a refused check shown in place, at ${width} px`, async (t) => {
    const c = await makeCustomer(account.liveApi!, { name: 'Harbour Cafe' });
    const url = await mintCalendarLink(account.liveApi!, c.id);
    const { page, response, errors } = await open(t, url, width);
    t.is(response?.status(), 200);
    t.true(await page.getByText('Other calendar (iCloud, Fastmail, Nextcloud…)').isVisible());
    await checkPage(t, page, errors, `live-${width}`);

    await page.getByLabel("Calendar's address").fill('http://127.0.0.1:9/dav/');
    await page.getByLabel('User name').fill('ana');
    await page.getByLabel('App password').fill('an-app-password');
    await page.getByRole('button', { name: 'Connect this calendar' }).click();
    await page.getByRole('alert').waitFor({ timeout: 15_000 });
    t.regex(await page.getByRole('alert').innerText(), /The calendar could not be connected/);
    t.is(await page.getByLabel("Calendar's address").inputValue(), 'http://127.0.0.1:9/dav/', 'what was typed is kept');
    t.is(await page.getByLabel('App password').inputValue(), '', 'never the password');
    await checkPage(t, page, errors, `live-refused-${width}`);
  });
}

test.serial("a French customer's calendar page is in French", async (t) => {
  const c = await makeCustomer(account.api, { name: 'Boulangerie Éclair', country: 'FR', timezone: 'Europe/Paris' });
  const url = await mintCalendarLink(account.api, c.id);
  const { page, response, errors } = await open(t, url, 375);
  t.is(response?.status(), 200);
  t.is(await page.locator('html').getAttribute('lang'), 'fr');
  t.regex(await page.locator('h2').innerText(), /Connecter l'agenda de Boulangerie Éclair/);
  t.true(await page.getByRole('button', { name: "Connecter l'agenda de test" }).isVisible());
  await checkPage(t, page, errors, 'fr-375');
});
