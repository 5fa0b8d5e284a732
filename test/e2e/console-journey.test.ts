/**
 * The reseller console in a real browser (Debian's chromium via playwright-core) against the
 * whole service in this process, as a new reseller's owner goes (issue 21, "Done when"): the
 * operator creates the account with the owner's email; the owner accepts the invitation, sets a
 * password, turns on two-factor, submits the business details, signs the agreement, switches to
 * test mode, creates a customer and mints its onboarding link, creates a key and sees its secret
 * once, creates a webhook endpoint against a local receiver and watches a delivery arrive, makes
 * the receiver fail and resends, places a test call, advances a test clock so it is dialled,
 * opens its page (recording player, transcript, compliance trail) and exports the ledger as CSV.
 *
 * Every page is screenshotted at 1280 and 375 px into test-results/console-journey/ (git-ignored),
 * checked with axe-core (no serious or critical violation) and for horizontal scrolling at 375 px,
 * and the browser's console must stay free of errors. The steps run in order and share the
 * browser: a step that fails leaves the ones after it failing too, each with its own name.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { generate as totpCode } from 'otplib';
import { Webhook } from 'standardwebhooks';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { look as lookAt, settled as settledPage, until, watchConsoleErrors } from './console-browser.ts';
import { ensureConsoleBuilt } from '../../app/console-build.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminClient } from '../helpers/factories.ts';
import { client, type Client } from '../helpers/http.ts';
import { loadDncRegistries } from '../helpers/dnc-registries.ts';
import { startReceiver } from '../helpers/receiver.ts';

const OUT = path.join(process.cwd(), 'test-results', 'console-journey');
const OWNER = { name: 'Olivia Owner', email: 'olivia@northwind-agency.example', password: 'a long and calm passphrase 42' };
const BUSINESS = {
  legal_name: 'Northwind Agency LLC',
  registration_number: 'EIN 12-3456789',
  country: 'US',
  address: '1 Harbor Way, Portland, OR 97201',
  contact_email: 'legal@northwind-agency.example',
  business_description: 'We resell AI appointment-setting calls to dental and plumbing practices in Oregon.',
};
/** A US business line whose simulated call books an appointment (README, "Calls": last digit 1). */
const CALLED = '+12025550101';
/** Sunday 2026-11-29 03:00 in New York: every US calling window is shut. */
const CLOCK_START = '2026-11-29T08:00:00.000Z';
/** Monday 2026-11-30 10:00 in New York: open. */
const CLOCK_OPEN = '2026-11-30T15:00:00.000Z';

/** The browser's zone: what the datetime fields mean. */
const TIME_ZONE = 'America/New_York';

/** An instant as a datetime-local field in the browser's zone shows it (YYYY-MM-DDTHH:MM). */
function localInput(iso: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

let svc: TestService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let admin: Client;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let receiverFails = false;
/** What the main page's console said that was an error, since the last look. */
let consoleErrors: ReturnType<typeof watchConsoleErrors>;
const s = {
  accountId: '',
  invitation: '',
  totpSecret: '',
  customerId: '',
  onboardingUrl: '',
  keySecret: '',
  endpointId: '',
  endpointSecret: '',
  callId: '',
  clockId: '',
};

test.before(async () => {
  await fs.rm(OUT, { recursive: true, force: true });
  await fs.mkdir(OUT, { recursive: true });
  // The console is built when its sources changed (a fresh checkout builds it here).
  await ensureConsoleBuilt({ quiet: true });
  const [started, launched, listening] = await Promise.allSettled([
    startTestService({ SWITCHBOARD_SENDER_POLL_MS: '100', SWITCHBOARD_DIALLER_POLL_MS: '200' }),
    launchChromium(),
    startReceiver(() => (receiverFails ? { status: 500, body: 'receiver down for maintenance' } : { status: 200, body: 'thanks' })),
  ]);
  if (started.status === 'fulfilled') svc = started.value;
  if (launched.status === 'fulfilled') browser = launched.value;
  if (listening.status === 'fulfilled') receiver = listening.value;
  for (const r of [started, launched, listening]) if (r.status === 'rejected') throw r.reason;
  admin = adminClient(svc.url);
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, timezoneId: TIME_ZONE, locale: 'en-US' });
  context.setDefaultTimeout(10_000);
  // Where a refused inline style or script comes from, should one be refused.
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP refused ${e.effectiveDirective} at ${e.sourceFile}:${e.lineNumber}: ${e.sample}`));
  });
  page = await context.newPage();
  consoleErrors = watchConsoleErrors(page);
});

let step = 0;
test.afterEach.always('a failed step leaves a screenshot of where it stopped', async (t) => {
  step += 1;
  if (!t.passed && page) await page.screenshot({ path: path.join(OUT, `failed-step-${String(step).padStart(2, '0')}.png`), fullPage: true }).catch(() => {});
});

test.after.always('close the browser, the receiver and the service', async () => {
  await context?.close().catch(() => {});
  await browser?.close().catch(() => {});
  await receiver?.close().catch(() => {});
  await svc?.stop();
});

const url = (p: string) => `${svc.url}/console${p}`;

const takeConsoleErrors = (expected: RegExp[] = []) => consoleErrors.take(expected);
const settled = (p: Page = page) => settledPage(p);

/**
 * Screenshots the page as it is at 1280 and 375 px, checks axe at both widths and that nothing
 * scrolls sideways at 375 px, and that the console logged no error.
 */
const look = (t: ExecutionContext, name: string, p: Page = page, expected: RegExp[] = []) => lookAt(t, OUT, name, p, consoleErrors, expected);

/** Follows a navigation link of the console and waits for its page (loaded on demand) to show. */
async function nav(label: string, p: Page = page): Promise<void> {
  const link = p.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true });
  const href = (await link.getAttribute('href'))!;
  await link.click();
  await p.waitForURL((u) => u.pathname === href);
  await p.locator('main h1').first().waitFor();
  await settled(p);
}

const heading = (p: Page = page) => p.getByRole('heading', { level: 1 }).innerText();

/** Presses the deliveries' Refresh until the newest delivery's text (with its attempts) passes `check`. */
function untilDeliveries(what: string, check: (newest: string) => boolean): Promise<void> {
  return until(what, async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await settled();
    return check(await page.locator('#deliveries li.delivery').first().innerText());
  });
}

/** `link` opened in a browser context of its own (another person), with what its console says. */
async function otherBrowser(t: ExecutionContext, link: string): Promise<{ p: Page; errors: string[] }> {
  const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.teardown(() => other.close());
  const p = await other.newPage();
  const errors: string[] = [];
  p.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await p.goto(link);
  await settled(p);
  return { p, errors };
}

/** The value shown by the copy field labelled `label`. */
const copyValue = (label: string) => page.locator('.copy-field', { has: page.locator('.copy-field-label', { hasText: label }) }).locator('.copy-field-value').innerText();

test.serial('the operator creates the account with its owner email and gets the invitation link', async (t) => {
  const res = await admin.post('/admin/v1/accounts', { name: 'Northwind Agency', country: 'US', owner_email: OWNER.email });
  t.is(res.status, 201, res.text);
  s.accountId = res.body.id;
  s.invitation = res.body.owner_invitation?.url;
  t.truthy(s.invitation, 'the answer carries owner_invitation.url');
  t.true(s.invitation.startsWith(`${svc.url}/console/accept?token=`), s.invitation);
});

test.serial('sign-in page: served with its CSP, and a wrong password is answered in words', async (t) => {
  const res = await page.goto(url('/sign-in'));
  t.is(res?.status(), 200);
  t.regex(res!.headers()['content-security-policy'] ?? '', /script-src 'self'/);
  t.is(res!.headers()['x-frame-options'], 'DENY');
  await settled();
  t.is(await heading(), 'Sign in');
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill('not the password at all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  t.regex(await page.getByRole('alert').innerText(), /\w+ \w+/, 'the error in words');
  await look(t, 'sign-in', page, [/status of 401/]);
});

test.serial('the owner opens the invitation, sets a name and password, and is signed in', async (t) => {
  await page.goto(s.invitation);
  await settled();
  t.is(await heading(), 'Join your team');
  const text = await page.locator('main').innerText();
  t.regex(text, /Northwind Agency/);
  t.regex(text, new RegExp(OWNER.email.replace('.', '\\.')));
  t.regex(text, /Owner/);
  await look(t, 'accept-invitation');
  await page.getByLabel('Your name').fill(OWNER.name);
  await page.getByLabel('Choose a password').fill(OWNER.password);
  await page.getByLabel('Repeat the password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Set password and continue' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
  t.is(new URL(page.url()).pathname, '/console');
  const cookies = await context.cookies(`${svc.url}/console/`);
  const session = cookies.find((c) => c.name === 'sb_console');
  t.truthy(session, 'the session cookie is set');
  t.true(session!.httpOnly, 'HttpOnly');
  t.is(session!.sameSite, 'Strict');
  t.is(session!.path, '/console');
  t.regex(await page.locator('.topbar').innerText(), /Northwind Agency/);
});

test.serial('the owner turns on two-factor with a code computed from the secret the page shows', async (t) => {
  await nav('Your security');
  t.is(await heading(), 'Your security');
  await page.getByRole('button', { name: 'Set up two-factor' }).click();
  await page.locator('.copy-field').first().waitFor();
  s.totpSecret = (await copyValue('Key')).trim();
  const otpauth = (await copyValue('Setup address')).trim();
  t.regex(s.totpSecret, /^[A-Z2-7]+=*$/, 'a base32 secret');
  t.true(otpauth.startsWith('otpauth://totp/'), otpauth);
  t.true(otpauth.includes(`secret=${s.totpSecret}`));
  t.is(await page.getByRole('img', { name: 'QR code of the two-factor setup address' }).count(), 1, 'and as a QR code');
  await look(t, 'security-two-factor-setup');
  await page.getByLabel('Code from the app').fill(await totpCode({ secret: s.totpSecret }));
  await page.getByRole('button', { name: 'Turn on two-factor' }).click();
  await page.getByRole('button', { name: 'Turn off two-factor' }).waitFor();
  t.regex(await page.locator('#two-factor').innerText(), /Status: On/);
  await look(t, 'security');
});

test.serial('going live: the checklist, the business details submitted for review, the agreement read and signed', async (t) => {
  await nav('Going live');
  t.is(await heading(), 'Going live');
  const checklist = page.locator('#checklist');
  t.regex(await checklist.innerText(), /Business verification/);
  for (const [name, value] of Object.entries(BUSINESS)) await page.locator(`[name="${name}"]`).fill(value);
  await page.getByRole('button', { name: 'Submit for review' }).click();
  await page.getByText('Saved and sent for review.').waitFor();
  await page.locator('#business-details').getByText(/Waiting for the operator/).waitFor();
  const details = await admin.get(`/admin/v1/accounts/${s.accountId}/business_details`);
  t.is(details.status, 200, details.text);
  t.is(details.body.details?.legal_name ?? details.body.legal_name, BUSINESS.legal_name, 'the operator reads what was submitted');

  const agreement = page.locator('#agreement');
  t.true((await agreement.locator('.agreement-text').innerText()).split(/\s+/).length > 100, 'the agreement text is there to read');
  await agreement.getByRole('checkbox').check();
  await agreement.getByRole('button', { name: 'Sign the agreement' }).click();
  await agreement.getByText(/signed on/).waitFor();
  t.regex(await agreement.innerText(), new RegExp(`by ${OWNER.name}`));
  await settled();
  await look(t, 'going-live');
});

test.serial('the test/live switch: live shows the not-live banner, test mode is switched back on', async (t) => {
  const toggle = page.getByRole('switch', { name: 'Test mode' });
  t.true(await toggle.isChecked(), 'a new account opens in test mode');
  await toggle.click({ force: true });
  t.false(await toggle.isChecked());
  await page.getByText(/Live mode: your account is not live yet/).waitFor();
  await toggle.click({ force: true });
  t.true(await toggle.isChecked());
  await page.getByText(/Test mode: test data only/).waitFor();
});

test.serial('a test clock stopped on a Sunday night in New York', async (t) => {
  await nav('Test clocks');
  t.is(await heading(), 'Test clocks');
  await page.getByLabel('Name').fill('Journey clock');
  await page.getByLabel('Starts at').fill(localInput(CLOCK_START));
  await page.getByRole('button', { name: 'Create clock' }).click();
  await page.getByRole('heading', { name: 'Journey clock' }).waitFor();
  const clocks = await page.evaluate(async () => (await fetch('/console/api/test_clocks', { credentials: 'same-origin' })).json());
  s.clockId = clocks.data[0].id;
  t.is(new Date(clocks.data[0].frozen_time).toISOString(), CLOCK_START);
  await look(t, 'test-clocks');
});

test.serial('a customer on that clock, and its onboarding link minted, copied and accepted', async (t) => {
  await nav('Customers');
  t.is(await heading(), 'Customers');
  await look(t, 'customers-empty');
  await page.getByRole('button', { name: 'Create customer' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Business name').fill('Bright Dental');
  await dialog.getByLabel('Your reference (optional)').fill('bright-1');
  await dialog.getByLabel('Country').fill('US');
  await dialog.getByLabel('Time zone').fill('America/New_York');
  await dialog.getByLabel('Test clock (optional)').selectOption({ label: 'Journey clock' });
  await look(t, 'customer-create-dialog');
  await dialog.getByRole('button', { name: 'Create customer' }).click();
  await page.getByRole('heading', { level: 1, name: 'Bright Dental' }).waitFor();
  s.customerId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  t.truthy(s.customerId);

  await page.getByRole('button', { name: 'Create onboarding link' }).click();
  await page.locator('#onboarding-links .copy-field').waitFor();
  s.onboardingUrl = (await copyValue('Onboarding link')).trim();
  t.true(s.onboardingUrl.includes('/onboarding/ob_'), s.onboardingUrl);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  await page.getByRole('button', { name: 'Copy onboarding link' }).click();
  await page.locator('#onboarding-links').getByText('Copied').waitFor();
  t.is(await page.evaluate(() => navigator.clipboard.readText()), s.onboardingUrl, 'the copy button copied the link');

  // The customer accepts the terms on the link.
  const customerPage = await context.newPage();
  await customerPage.goto(s.onboardingUrl);
  await customerPage.locator('#accepted_by').fill('Dr Bright');
  await customerPage.locator('input[name=agree]').check();
  await Promise.all([customerPage.waitForNavigation(), customerPage.locator('button[type=submit]').click()]);
  t.regex(await customerPage.locator('body').innerText(), /Thank you, Dr Bright/);
  await customerPage.close();

  await page.reload();
  await settled();
  const links = await page.locator('#onboarding-links').innerText();
  t.regex(links, /Completed/);
  t.regex(links, /Dr Bright/, 'who accepted is shown');
  await look(t, 'customer');
  await nav('Test clocks');
  t.regex(await page.locator('main').innerText(), /1 test customer on it/, 'the customer is on the clock');
});

test.serial('a key created with its secret shown once and a copy button; gone after', async (t) => {
  await nav('API keys');
  t.is(await heading(), 'API keys');
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Label').fill('Journey server');
  await dialog.getByLabel('IP allowlist (optional)').fill('');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  await page.locator('.secret-once').waitFor();
  s.keySecret = (await copyValue('Secret key')).trim();
  t.regex(s.keySecret, /^svc_test_/);
  t.truthy(await page.getByRole('button', { name: 'Copy secret key' }).count());
  await look(t, 'keys-secret-once');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  t.is(await page.locator('.secret-once').count(), 0);
  t.false((await page.content()).includes(s.keySecret), 'the secret is no longer in the page');
  await page.reload();
  await settled();
  t.false((await page.content()).includes(s.keySecret), 'nor after a reload');
  t.regex(await page.locator('main').innerText(), /Journey server/);
  // The key works on the API.
  const me = await client(svc.url, s.keySecret).get('/v1/me');
  t.is(me.status, 200, me.text);
  t.is(me.body.id, s.accountId);
  await look(t, 'keys');
});

test.serial('a webhook endpoint against a local receiver: its secret once, a test event delivered and signed', async (t) => {
  await nav('Webhooks');
  t.is(await heading(), 'Webhooks');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Endpoint URL').fill(receiver.url);
  await dialog.getByLabel('Description (optional)').fill('Journey receiver');
  await dialog.getByRole('button', { name: 'Add endpoint' }).click();
  await page.locator('.secret-once').waitFor();
  s.endpointSecret = (await copyValue('Signing secret')).trim();
  t.regex(s.endpointSecret, /^whsec_/);
  await look(t, 'webhooks-secret-once');
  await page.getByRole('link', { name: receiver.url }).first().click();
  await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
  await settled();
  s.endpointId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);

  const before = receiver.received.length;
  await page.getByRole('button', { name: 'Send a test event' }).click();
  await until('the receiver gets the test event', async () => receiver.received.length > before);
  const delivered = receiver.received[receiver.received.length - 1];
  const verified = new Webhook(s.endpointSecret).verify(delivered.body, {
    'webhook-id': String(delivered.headers['webhook-id']),
    'webhook-timestamp': String(delivered.headers['webhook-timestamp']),
    'webhook-signature': String(delivered.headers['webhook-signature']),
  });
  t.truthy(verified, 'signed with the secret shown once');
  await untilDeliveries('the delivery shows as succeeded with its attempt', (newest) => /Succeeded/.test(newest) && /HTTP 200/.test(newest));
  t.regex(await page.locator('#deliveries').innerText(), /thanks/, 'the response excerpt is shown');
  await look(t, 'webhook-endpoint');
});

test.serial('the receiver fails: the failed attempt is shown, and Resend delivers it', async (t) => {
  receiverFails = true;
  const before = receiver.received.length;
  await page.getByRole('button', { name: 'Send a test event' }).click();
  await until('the receiver is tried and answers 500', async () => receiver.received.length > before);
  await untilDeliveries('the failed attempt shows', (newest) => /HTTP 500/.test(newest));
  const failed = page.locator('#deliveries li.delivery').filter({ hasText: 'HTTP 500' }).first();
  t.regex(await failed.innerText(), /receiver down for maintenance/);
  await look(t, 'webhook-endpoint-failed');

  receiverFails = false;
  const beforeResend = receiver.received.length;
  await failed.getByRole('button', { name: 'Resend' }).click();
  await until('the resend reaches the receiver', async () => receiver.received.length > beforeResend);
  await untilDeliveries('the resent delivery shows its second attempt, 200', (newest) => /HTTP 500/.test(newest) && /HTTP 200/.test(newest) && /Succeeded/.test(newest));
  t.pass();
});

test.serial('events: the test events are in the browser', async (t) => {
  await nav('Events');
  t.is(await heading(), 'Events');
  await page.locator('main table').waitFor();
  t.true((await page.locator('main tbody tr').count()) >= 2);
  await look(t, 'events');
});

test.serial('a test call placed from the customer page waits for the calling window on the clock', async (t) => {
  // What the operator and the reseller's own server do for a customer to be callable: registries,
  // language and script certified, a number provisioned (through the API, with the key made above).
  await loadDncRegistries(admin, 'US');
  const api = client(svc.url, s.keySecret);
  const language = (await api.get('/v1/coverage?country=US')).body.calling_language;
  await admin.post(`/admin/v1/languages/${language}/certify`);
  const provisioned = await api.post(`/v1/customers/${s.customerId}/provisioning`, { steps: ['number'] });
  t.true(provisioned.status < 300, provisioned.text);
  const script = await admin.post(`/admin/v1/customers/${s.customerId}/script/certify`);
  t.true(script.status < 300, script.text);

  await nav('Customers');
  t.regex(await page.locator('main table').innerText(), /Bright Dental[\s\S]*bright-1/);
  await look(t, 'customers');
  await page.getByRole('link', { name: 'Bright Dental' }).click();
  await page.getByRole('heading', { level: 1, name: 'Bright Dental' }).waitFor();
  await settled();
  t.regex(await page.locator('#readiness').innerText(), /Ready for test calls/);
  await page.getByRole('button', { name: 'Place a test call' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Number to call').fill(CALLED);
  await dialog.getByLabel('Business called (optional)').fill('Acme Plumbing');
  await dialog.getByLabel('The number is a business line').check();
  await look(t, 'place-call-dialog');
  await dialog.getByRole('button', { name: 'Queue the call' }).click();
  await page.getByRole('heading', { level: 1, name: 'Call to Acme Plumbing' }).waitFor();
  s.callId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  // The page follows the call: the dialler's first look says what it waits for.
  await page.locator('#summary').getByText(/Waiting: Outside calling window/i).first().waitFor({ timeout: 15_000 });
  await look(t, 'call-waiting');
});

test.serial('advancing the clock to Monday morning dials the call; its page has the recording, transcript, appointment and compliance trail', async (t) => {
  await nav('Test clocks');
  await page.getByLabel('Advance to').fill(localInput(CLOCK_OPEN));
  await page.getByRole('button', { name: 'Advance', exact: true }).click();
  await page.getByText(/Moved to/).waitFor({ timeout: 30_000 });

  await until(
    'the call is finished',
    async () => {
      const r = await page.evaluate(async (id) => (await fetch(`/console/api/calls/${id}?mode=test`, { credentials: 'same-origin' })).json(), s.callId);
      return r.call?.finished === true && typeof r.recording_url === 'string';
    },
    30_000,
  );
  await nav('Calls');
  t.is(await heading(), 'Calls');
  await look(t, 'calls');
  await page.getByRole('link', { name: 'Acme Plumbing' }).click();
  await page.locator('#summary').getByText('Appointment booked').first().waitFor({ timeout: 15_000 });
  await settled();
  const audio = page.locator('#recording audio[controls]');
  t.is(await audio.count(), 1, 'a recording player');
  const src = (await audio.getAttribute('src'))!;
  t.true(src.startsWith(`/console/api/calls/${s.callId}/recording`), src);
  const recording = await page.evaluate(async (u) => {
    const r = await fetch(u, { credentials: 'same-origin' });
    return { status: r.status, type: r.headers.get('content-type'), bytes: (await r.arrayBuffer()).byteLength };
  }, src);
  t.is(recording.status, 200);
  t.regex(recording.type ?? '', /^audio\/(wav|x-wav|wave)/);
  t.true(recording.bytes > 1000);
  t.true((await page.locator('#transcript li').count()) > 1, 'the transcript has turns');
  t.regex(await page.locator('#appointment').innerText(), /America\/New_York|EST|EDT|GMT/);
  const trail = await page.locator('#compliance-trail').innerText();
  t.regex(trail, /Passed/);
  t.true((await page.locator('#compliance-trail li').count()) >= 3, trail);
  await look(t, 'call');
});

test.serial('appointments: the list and the week and month calendars with time zones', async (t) => {
  await nav('Appointments');
  t.is(await heading(), 'Appointments');
  t.regex(await page.locator('main').innerText(), /America\/New_York/);
  await look(t, 'appointments');
  await page.getByRole('button', { name: 'Week' }).click();
  await look(t, 'appointments-week');
  await page.getByRole('button', { name: 'Month' }).click();
  await look(t, 'appointments-month');
});

test.serial('billing: the ledger filtered to the customer and exported as CSV', async (t) => {
  await nav('Billing');
  t.is(await heading(), 'Billing');
  await page.getByLabel('Customer', { exact: true }).selectOption(s.customerId);
  await settled();
  await look(t, 'billing');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /Export CSV/ }).click()]);
  const file = path.join(OUT, 'ledger.csv');
  await download.saveAs(file);
  const csv = await fs.readFile(file, 'utf8');
  const [header, ...rows] = csv.trim().split(/\r?\n/);
  t.regex(header, /amount/i);
  t.true(rows.length >= 1, csv);
  t.true(rows.every((r) => r.includes(s.customerId)), 'only the customer’s lines');
});

test.serial('the overview: balance, spend against caps, the 30-day chart and its table, blocked customers', async (t) => {
  await nav('Overview');
  t.is(await heading(), 'Overview');
  await page.locator('#calls-by-day .chart canvas').first().waitFor();
  t.is(await page.locator('#calls-by-day details table').count(), 1, 'the same numbers as a table');
  t.is(await page.locator('#calls-by-day details tbody tr').count(), 30, '30 days');
  t.regex(await page.locator('.cards').innerText(), /Available balance/);
  await look(t, 'overview');
});

test.serial('the brand page: the preview follows the form, and the brand is saved', async (t) => {
  await nav('Brand');
  t.is(await heading(), 'Brand');
  await page.getByLabel('Display name').fill('Northwind Calls');
  await page.getByLabel('Primary colour').fill('#123456');
  t.regex(await page.locator('.brand-preview').innerText(), /Northwind Calls/, 'the preview follows the form');
  t.is(await page.locator('.brand-preview-header').evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(18, 52, 86)');
  await page.getByRole('button', { name: 'Save brand' }).click();
  await page.getByText('Brand saved.').waitFor();
  await look(t, 'brand');
});

test.serial('the team page: members with two-factor status, and an invitation for a viewer', async (t) => {
  await nav('Team');
  t.is(await heading(), 'Team');
  t.regex(await page.locator('#members').innerText(), new RegExp(`${OWNER.name}[\\s\\S]*On`), 'the owner, two-factor on');
  await page.locator('#invite').getByLabel('Email').fill('victor@northwind-agency.example');
  await page.locator('#invite').getByLabel('Role').selectOption('viewer');
  await page.getByRole('button', { name: 'Create invitation' }).click();
  await page.locator('#invite .copy-field').waitFor();
  await look(t, 'team');
});

test.serial('a viewer sees no "Create key" button', async (t) => {
  const link = (await copyValue('Invitation link')).trim();
  const { p, errors } = await otherBrowser(t, link);
  await p.getByLabel('Your name').fill('Victor Viewer');
  await p.getByLabel('Choose a password').fill('another calm passphrase 77');
  await p.getByLabel('Repeat the password').fill('another calm passphrase 77');
  await p.getByRole('button', { name: 'Set password and continue' }).click();
  await p.getByRole('navigation', { name: 'Console' }).waitFor();
  await nav('API keys', p);
  t.is(await heading(p), 'API keys');
  t.regex(await p.locator('main').innerText(), /Journey server/, 'the viewer reads the keys');
  t.is(await p.getByRole('button', { name: 'Create key' }).count(), 0, 'no Create key button');
  t.is(await p.getByRole('button', { name: 'Revoke' }).count(), 0, 'no Revoke button');
  await look(t, 'keys-viewer', p);
  t.deepEqual(errors, []);
});

test.serial('password reset: a link the owner mints on the Team page lets the viewer choose a new password', async (t) => {
  // The Team page is still open from before the viewer joined: read it again.
  await page.reload();
  await settled();
  const viewerRow = page.locator('#members tr', { hasText: 'victor@northwind-agency.example' });
  await viewerRow.getByRole('button', { name: 'Reset link' }).click();
  await page.locator('#members .copy-field').waitFor();
  const link = (await copyValue('Reset link')).trim();
  t.true(link.startsWith(`${svc.url}/console/reset?token=`), link);

  const { p, errors } = await otherBrowser(t, link);
  t.is(await heading(p), 'Choose a new password');
  await look(t, 'password-reset-complete', p);
  await p.getByLabel('New password', { exact: true }).fill('a brand new calm passphrase');
  await p.getByLabel('Repeat the new password').fill('a brand new calm passphrase');
  await p.getByRole('button', { name: 'Change password' }).click();
  await p.getByText(/Your password is changed/).waitFor();
  await p.getByRole('link', { name: 'Sign in' }).click();
  await p.getByLabel('Email').fill('victor@northwind-agency.example');
  await p.getByLabel('Password').fill('a brand new calm passphrase');
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('navigation', { name: 'Console' }).waitFor();

  // The request page: the same answer whoever the address belongs to.
  await p.goto(`${svc.url}/console/reset`);
  await settled(p);
  t.is(await heading(p), 'Reset your password');
  await look(t, 'password-reset-request', p);
  await p.getByLabel('Email').fill('nobody@nowhere.example');
  await p.getByRole('button', { name: 'Send a reset link' }).click();
  await p.getByText(/a reset link is on its way/).waitFor();
  t.deepEqual(errors, []);
});

test.serial('an address the console does not have: its not-found page in the frame', async (t) => {
  const res = await page.goto(url('/no/such/page'));
  t.is(res?.status(), 200, 'the app answers; the page says it is not there');
  await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
  await look(t, 'not-found');
});

test.serial('signing out, and back in with the password and a two-factor code', async (t) => {
  await page.getByRole('button', { name: /Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Two-factor code').waitFor();
  // A code is accepted once per 30-second step: the next step's, as an app shows it then.
  const step = Math.floor(Date.now() / 30_000);
  const code = await totpCode({ secret: s.totpSecret, epoch: (step + 1) * 30 });
  await page.getByLabel('Two-factor code').fill(code);
  await look(t, 'sign-in-two-factor', page, [/status of 401/]);
  await page.getByRole('button', { name: 'Verify and sign in' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
  t.is(await heading(), 'Overview');
  t.deepEqual(takeConsoleErrors(), []);
});
