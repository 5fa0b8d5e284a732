/**
 * A customer's booking settings in the reseller console, in a real browser (Debian's chromium via
 * playwright-core) against the whole service in this process (issue 24): the owner sees the
 * defaults (Monday–Friday 09:00–17:00, 30-minute meetings, 15 minutes around them, 2 hours of
 * notice, 30 days ahead), changes them, and the API shows them; a refusal (overlapping spans) is
 * shown in the API's words and nothing changes. Screenshots at 1280 and 375 px into
 * test-results/booking/ (git-ignored), axe-core with no serious violation, no console errors
 * except the refusal's 400.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { look as lookAt, settled, watchConsoleErrors } from './console-browser.ts';
import { ensureConsoleBuilt } from '../../app/console-build.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';

const OUT = path.join(process.cwd(), 'test-results', 'booking');

let svc: TestService;
let browser: Browser;
let account: TestAccount;
let customer: { id: string };

test.before(async () => {
  await fs.rm(OUT, { recursive: true, force: true });
  await fs.mkdir(OUT, { recursive: true });
  await ensureConsoleBuilt({ quiet: true });
  const [started, launched] = await Promise.allSettled([startTestService(), launchChromium()]);
  if (started.status === 'fulfilled') svc = started.value;
  if (launched.status === 'fulfilled') browser = launched.value;
  for (const r of [started, launched]) if (r.status === 'rejected') throw r.reason;
  account = await makeAccount(svc.url);
  customer = await makeCustomer(account.api, { name: 'Bright Dental', timezone: 'America/New_York' });
});

test.after.always('close the browser and the service', async () => {
  await browser?.close().catch(() => {});
  await svc?.stop();
});

test.serial('the owner sees the default booking rules, changes them, and the API shows them; a refusal is shown in its words', async (t) => {
  const person = await consoleAs(svc.url, account.id, 'owner');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'America/New_York' });
  context.setDefaultTimeout(10_000);
  const [name, value] = person.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/console', httpOnly: true, sameSite: 'Strict' }]);
  const page = await context.newPage();
  const errors = watchConsoleErrors(page);
  const look = (shot: string, expected: RegExp[] = []) => lookAt(t as ExecutionContext, OUT, shot, page, errors, expected);
  const save = () => page.getByRole('button', { name: 'Save booking settings' }).click();
  try {
    await page.goto(`${svc.url}/console/customers/${customer.id}?mode=test`);
    await page.locator('#booking').waitFor();
    await settled(page);
    t.is(await page.getByLabel('Monday', { exact: true }).inputValue(), '09:00–17:00');
    t.is(await page.getByLabel('Friday', { exact: true }).inputValue(), '09:00–17:00');
    t.is(await page.getByLabel('Saturday', { exact: true }).inputValue(), '');
    t.is(await page.getByLabel('Meeting length (minutes)').inputValue(), '30');
    t.is(await page.getByLabel('Gap around meetings (minutes)').inputValue(), '15');
    t.is(await page.getByLabel('Soonest booking (minutes ahead)').inputValue(), '120');
    t.is(await page.getByLabel('Furthest booking (days ahead)').inputValue(), '30');
    await look('customer-booking-defaults');

    await page.getByLabel('Monday', { exact: true }).fill('08:30–12:00, 13:00-18:00');
    await page.getByLabel('Saturday', { exact: true }).fill('10:00–12:00');
    await page.getByLabel('Friday', { exact: true }).fill('');
    await page.getByLabel('Meeting length (minutes)').fill('45');
    await page.getByLabel('Gap around meetings (minutes)').fill('');
    await save();
    await page.getByText('Booking settings saved.').waitFor();
    // It stays once the page has fetched the customer again (it used to vanish with the refetch).
    await settled(page);
    t.true(await page.getByText('Booking settings saved.').isVisible(), 'the notice stays after the refetch');
    t.is(await page.getByLabel('Gap around meetings (minutes)').inputValue(), '15', 'an emptied number shows its default again');
    const shown = (await account.api.get(`/v1/customers/${customer.id}`)).body.booking;
    t.deepEqual(shown.business_hours.mon, [{ start: '08:30', end: '12:00' }, { start: '13:00', end: '18:00' }]);
    t.deepEqual(shown.business_hours.sat, [{ start: '10:00', end: '12:00' }]);
    t.deepEqual(shown.business_hours.fri, []);
    t.is(shown.meeting_minutes, 45);
    t.is(shown.buffer_minutes, 15);
    await look('customer-booking-saved');

    await page.getByLabel('Tuesday', { exact: true }).fill('09:00–12:30, 12:00–17:00');
    await save();
    await page.getByRole('alert').filter({ hasText: 'must not overlap' }).waitFor();
    t.regex(await page.getByRole('alert').innerText(), /booking\.business_hours\.tue spans must not overlap/);
    await look('customer-booking-refused', [/status of 400/, /^\(400 PATCH /]);
    t.deepEqual((await account.api.get(`/v1/customers/${customer.id}`)).body.booking.business_hours.tue, [{ start: '09:00', end: '17:00' }]);
  } finally {
    await context.close();
  }
});
