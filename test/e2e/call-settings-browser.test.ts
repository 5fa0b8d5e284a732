/**
 * A customer's registered name and call settings in the reseller console, in a real browser
 * (Debian's chromium via playwright-core) against the whole service in this process (issue 23):
 *
 * - the owner opens a customer's page: the registered name in Details and the "Calls" section
 *   with every setting in force (the defaults);
 * - changes the registered name and some settings, saves, and the API shows them; an emptied
 *   field goes back to its default;
 * - a value the API refuses (one past a bound, forward without a phone) is shown in the API's words,
 *   and nothing changes;
 * - a viewer sees the settings but cannot change them.
 *
 * Each page is screenshotted at 1280 and 375 px into test-results/call-settings/ (git-ignored),
 * checked with axe-core (no serious or critical violation) and for sideways scrolling at 375 px,
 * and the browser's console stays free of errors (except the 400s the refusal step provokes).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { look as lookAt, settled, watchConsoleErrors } from './console-browser.ts';
import { ensureConsoleBuilt } from '../../app/console-build.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { consoleAs } from '../helpers/console.ts';

const OUT = path.join(process.cwd(), 'test-results', 'call-settings');

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
  customer = await makeCustomer(account.api, { name: 'Bright Dental', external_ref: 'bright-browser' });
});

test.after.always('close the browser and the service', async () => {
  await browser?.close().catch(() => {});
  await svc?.stop();
});

/** A signed-in browser page of a new person of the account with `role`. */
async function signedIn(role: string): Promise<{ context: BrowserContext; page: Page; errors: ReturnType<typeof watchConsoleErrors> }> {
  const person = await consoleAs(svc.url, account.id, role);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'America/New_York' });
  context.setDefaultTimeout(10_000);
  const [name, value] = person.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/console', httpOnly: true, sameSite: 'Strict' }]);
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP refused ${e.effectiveDirective} at ${e.sourceFile}:${e.lineNumber}: ${e.sample}`));
  });
  const page = await context.newPage();
  return { context, page, errors: watchConsoleErrors(page) };
}

async function openCustomer(page: Page): Promise<void> {
  await page.goto(`${svc.url}/console/customers/${customer.id}?mode=test`);
  await page.locator('#call-settings').waitFor();
  await settled(page);
}

const save = (page: Page) => page.getByRole('button', { name: 'Save call settings' }).click();

test.serial('the owner sees the defaults, changes the registered name and settings, and the API shows them', async (t) => {
  const { context, page, errors } = await signedIn('owner');
  const look = (name: string, expected: RegExp[] = []) => lookAt(t as ExecutionContext, OUT, name, page, errors, expected);
  try {
    await openCustomer(page);
    t.regex(await page.locator('#details').innerText(), /Registered name\s+— \(calls say "Bright Dental"\)/);
    t.is(await page.getByLabel('Voice', { exact: true }).inputValue(), 'marin');
    t.is(await page.getByLabel('At an answering machine').inputValue(), 'leave_message');
    t.is(await page.getByLabel('Silence that ends a turn (ms)').inputValue(), '500');
    t.is(await page.getByLabel('Speech threshold').inputValue(), '0.5');
    t.is(await page.getByLabel('Audio kept before speech (ms)').inputValue(), '300');
    t.is(await page.getByLabel('Short replies that do not interrupt (ms)').inputValue(), '700');
    t.is(await page.getByLabel('Attempts per request').inputValue(), '3');
    t.is(await page.getByLabel('Hours between attempts').inputValue(), '4');
    t.is(await page.getByLabel('When someone calls back').inputValue(), '');
    t.is(await page.getByLabel('If the person objects to the recording').inputValue(), 'continue_unrecorded');
    await look('customer-call-settings-defaults');

    await page.getByLabel('Registered name', { exact: true }).fill('Bright Dental Care LLC');
    await page.getByLabel('Registered address', { exact: true }).fill('1 High Street, Leeds LS1 1AA');
    await page.getByLabel('Voice', { exact: true }).selectOption('coral');
    await page.getByLabel('At an answering machine').selectOption('hang_up');
    await page.getByLabel('Voicemail message').fill('Please call Bright Dental back.');
    await page.getByLabel('Attempts per request').fill('5');
    await page.getByLabel('Hours between attempts').fill('72');
    await page.getByLabel('Silence that ends a turn (ms)').fill('');
    await page.getByLabel('When someone calls back').selectOption('agent');
    await page.getByLabel('If the person objects to the recording').selectOption('end_call');
    await save(page);
    await page.getByText('Call settings saved.').waitFor();
    // It stays once the page has fetched the customer again (it used to vanish with the refetch).
    await settled(page);
    t.true(await page.getByText('Call settings saved.').isVisible(), 'the notice stays after the refetch');
    // The emptied field shows its default again.
    t.is(await page.getByLabel('Silence that ends a turn (ms)').inputValue(), '500');
    const shown = (await account.api.get(`/v1/customers/${customer.id}`)).body;
    t.is(shown.registered_name, 'Bright Dental Care LLC');
    t.is(shown.registered_address, '1 High Street, Leeds LS1 1AA');
    t.deepEqual(shown.call_settings, {
      voice: 'coral',
      voicemail: { action: 'hang_up', message: 'Please call Bright Dental back.' },
      turn_detection: { silence_ms: 500, threshold: 0.5, prefix_padding_ms: 300, backchannel_max_ms: 700 },
      retries: { max_attempts: 5, min_gap_hours: 72 },
      inbound: { action: 'agent' },
      recording: { on_objection: 'end_call' },
    });
    await look('customer-call-settings-saved');

    // Refusals in the API's words; nothing changes.
    await page.getByLabel('Hours between attempts').fill('73');
    await save(page);
    await page.getByRole('alert').filter({ hasText: 'call_settings.retries.min_gap_hours' }).waitFor();
    t.regex(await page.getByRole('alert').innerText(), /"call_settings\.retries\.min_gap_hours" must be 72 or less/);
    await page.getByLabel('Hours between attempts').fill('72');
    await page.getByLabel('When someone calls back').selectOption('forward');
    await save(page);
    await page.getByRole('alert').filter({ hasText: /no phone/ }).waitFor();
    await look('customer-call-settings-refused', [/status of 400/, /^\(400 PATCH /]);
    t.deepEqual((await account.api.get(`/v1/customers/${customer.id}`)).body.call_settings.inbound, { action: 'agent' });
    t.regex(await page.locator('#details').innerText(), /Registered name\s+Bright Dental Care LLC/);
    t.regex(await page.locator('#details').innerText(), /Registered address\s+1 High Street, Leeds LS1 1AA/);
  } finally {
    await context.close();
  }
});

test.serial('a viewer sees the call settings but cannot change them', async (t) => {
  const { context, page, errors } = await signedIn('viewer');
  try {
    await openCustomer(page);
    t.is(await page.getByLabel('Voice', { exact: true }).inputValue(), 'coral');
    t.true(await page.getByLabel('Voice', { exact: true }).isDisabled());
    t.true(await page.getByLabel('Registered name', { exact: true }).isDisabled());
    t.is(await page.getByRole('button', { name: 'Save call settings' }).count(), 0);
    await lookAt(t, OUT, 'customer-call-settings-viewer', page, errors);
  } finally {
    await context.close();
  }
});
