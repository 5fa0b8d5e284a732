/**
 * The onboarding link in a real browser (Debian's chromium driven by playwright-core) against the
 * real `switchboard start` on its own embedded database: a reseller's branding, a customer
 * accepting the calling terms, and the pages for completed, replaced and unknown links.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { mintToken } from '../../runtime/tokens.ts';
import { cleanUpEverything, freePort, makeTempRoot, request, startSwitchboard, type Instance } from './process-helpers.ts';

const ADMIN_TOKEN = 'sbc_e2e_browser_console_token_XpVBlbl8NL8W';
const BRAND = { display_name: 'Northwind Calls', primary_color: '#123456', logo_url: 'https://example.com/logo.png' };
/** Names the white-label pages must never show. */
const HIDDEN_NAMES = /switchboard|twilio|openai/i;
/** A 1×1 PNG for the logo, so the page never reaches the internet. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

let service: Instance;
let browser: Browser;
let key = '';

test.before(async () => {
  const port = await freePort();
  const dataDir = path.join(await makeTempRoot('switchboard-e2e-browser-'), 'data');
  // Start the service and the browser at once; keep whichever started even if the other failed,
  // so the after hook can close it (a leaked chromium keeps the worker alive).
  const [started, launched] = await Promise.allSettled([
    startSwitchboard({
      dataDir,
      port,
      env: { SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN, SWITCHBOARD_PUBLIC_URL: `http://127.0.0.1:${port}` },
    }),
    launchChromium(),
  ]);
  if (launched.status === 'fulfilled') browser = launched.value;
  if (started.status === 'fulfilled') service = started.value;
  if (started.status === 'rejected') throw started.reason;
  if (launched.status === 'rejected') throw launched.reason;

  const account = await request(service.url, 'POST', '/admin/v1/accounts', { token: ADMIN_TOKEN, body: { name: 'Northwind Reselling LLC', country: 'US' } });
  if (account.status !== 201) throw new Error(`create account: ${account.status} ${account.text}`);
  const created = await request(service.url, 'POST', `/admin/v1/accounts/${account.body.id}/keys`, {
    token: ADMIN_TOKEN,
    body: { mode: 'test', label: 'browser-e2e' },
  });
  if (created.status !== 201) throw new Error(`create key: ${created.status} ${created.text}`);
  key = created.body.secret;
  const brand = await request(service.url, 'PATCH', '/v1/brand', { token: key, body: BRAND });
  if (brand.status !== 200) throw new Error(`brand: ${brand.status} ${brand.text}`);
});

test.after.always('close the browser, stop the service, remove everything', async () => {
  await browser?.close().catch(() => {});
  if (service?.isRunning()) await service.stop('SIGTERM', 10_000).catch(() => {});
  await cleanUpEverything();
});

/** A fresh page whose requests to the logo's host are answered locally. */
async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.route('https://example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PIXEL }));
  return page;
}

async function createCustomer(name: string, externalRef: string): Promise<string> {
  const res = await request(service.url, 'POST', '/v1/customers', { token: key, body: { name, external_ref: externalRef } });
  if (res.status !== 201) throw new Error(`create customer: ${res.status} ${res.text}`);
  return res.body.id;
}

async function mintLink(customer: string): Promise<string> {
  const res = await request(service.url, 'POST', `/v1/customers/${customer}/onboarding_link`, { token: key });
  if (res.status !== 201) throw new Error(`mint link: ${res.status} ${res.text}`);
  return res.body.url;
}

const visibleText = (page: Page) => page.locator('body').innerText();

test.serial('a customer accepts the calling terms on the page in the reseller brand', async (t) => {
  const customer = await createCustomer('Bright Dental', 'bright-1');
  const url = await mintLink(customer);
  t.true(url.startsWith(`${service.url}/onboarding/ob_`), url);

  const page = await newPage();
  t.teardown(() => page.context().close());
  const opened = await page.goto(url);
  t.is(opened?.status(), 200);
  const headers = await opened!.allHeaders();
  t.notRegex(JSON.stringify(headers), HIDDEN_NAMES, 'no response header names the service');
  t.is(headers['cache-control'], 'no-store', 'a page reached with a secret link is not cached');

  // The reseller's brand, and only theirs.
  t.regex(await page.title(), /Northwind Calls/);
  t.is((await page.locator('header h1').innerText()).trim(), 'Northwind Calls');
  t.is(await page.locator('header img.logo').getAttribute('src'), BRAND.logo_url);
  t.is(await page.locator('header').evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor as string), 'rgb(18, 52, 86)');
  const text = await visibleText(page);
  t.regex(text, /Calling terms for Bright Dental/);
  t.regex(text, /Northwind Calls may place outbound sales calls/);
  t.notRegex(text, HIDDEN_NAMES, 'the visible text names the service or its suppliers');
  t.notRegex(await page.title(), HIDDEN_NAMES);
  t.notRegex(await page.content(), HIDDEN_NAMES, 'the page source names the service or its suppliers');

  await page.locator('#accepted_by').fill('Jane Doe');
  await page.locator('input[name=agree]').check();
  const [submitted] = await Promise.all([page.waitForNavigation(), page.locator('button[type=submit]').click()]);
  t.is(submitted?.status(), 200);
  t.is(submitted?.request().method(), 'POST');
  const thanks = await visibleText(page);
  t.regex(thanks, /Thank you, Jane Doe/);
  t.regex(thanks, /accepted for Bright Dental/);
  t.notRegex(thanks, HIDDEN_NAMES);
  t.regex(await page.title(), /Northwind Calls/);

  const readiness = await request(service.url, 'GET', `/v1/customers/${customer}/readiness`, { token: key });
  t.is(readiness.status, 200);
  const blockers: string[] = readiness.body.blockers.map((b: { code: string }) => b.code);
  t.false(blockers.includes('customer_not_attested'), `blockers: ${blockers.join(', ')}`);
  t.true(readiness.body.checks.customer_accepted_terms);

  const links = await request(service.url, 'GET', `/v1/customers/${customer}/onboarding_link`, { token: key });
  t.is(links.status, 200);
  t.is(links.body.data.length, 1);
  t.is(links.body.data[0].status, 'completed');
  t.is(links.body.data[0].accepted_by, 'Jane Doe');
  t.truthy(links.body.data[0].completed_at);
  t.is(links.body.data[0].url, undefined, 'the list never shows the URL');

  // Opening the link again: already accepted, still in the brand, no form.
  const again = await page.goto(url);
  t.is(again?.status(), 200);
  const done = await visibleText(page);
  t.regex(done, /Already accepted/);
  t.regex(done, /accepted by Jane Doe/);
  t.is(await page.locator('form').count(), 0);
  t.is((await page.locator('header h1').innerText()).trim(), 'Northwind Calls');
  t.notRegex(await page.content(), HIDDEN_NAMES);
});

test.serial('a link replaced by a newer one says so with HTTP 410; the newer one works', async (t) => {
  const customer = await createCustomer('Harbor Plumbing', 'harbor-1');
  const linkA = await mintLink(customer);
  const linkB = await mintLink(customer);
  t.not(linkA, linkB);

  const page = await newPage();
  t.teardown(() => page.context().close());
  const a = await page.goto(linkA);
  t.is(a?.status(), 410);
  const text = await visibleText(page);
  t.regex(text, /This link has been replaced/);
  t.regex(text, /Harbor Plumbing/);
  t.regex(text, /Northwind Calls/);
  t.notRegex(await page.content(), HIDDEN_NAMES);
  t.is(await page.locator('form').count(), 0, 'a replaced link offers no form');

  const b = await page.goto(linkB);
  t.is(b?.status(), 200);
  t.is(await page.locator('#accepted_by').count(), 1);

  const links = await request(service.url, 'GET', `/v1/customers/${customer}/onboarding_link`, { token: key });
  t.deepEqual(
    links.body.data.map((l: { status: string }) => l.status),
    ['active', 'replaced'],
    'newest first: B active, A replaced',
  );

  // B's form is open in the browser when the reseller mints C: submitting B is refused, nothing accepted.
  await mintLink(customer);
  await page.locator('#accepted_by').fill('Late Larry');
  await page.locator('input[name=agree]').check();
  const [late] = await Promise.all([page.waitForNavigation(), page.locator('button[type=submit]').click()]);
  t.is(late?.status(), 410);
  t.regex(await visibleText(page), /This link has been replaced/);
  const readiness = await request(service.url, 'GET', `/v1/customers/${customer}/readiness`, { token: key });
  t.true(readiness.body.blockers.some((x: { code: string }) => x.code === 'customer_not_attested'), 'a replaced link accepts nothing');
  const after = await request(service.url, 'GET', `/v1/customers/${customer}/onboarding_link`, { token: key });
  t.deepEqual(after.body.data.map((l: { status: string }) => l.status), ['active', 'replaced', 'replaced']);
  t.false(after.body.data.some((l: { accepted_by: string | null }) => l.accepted_by !== null));
});

test.serial('an unknown or garbage token gets the neutral "not valid" page, 404, without a stack trace', async (t) => {
  const page = await newPage();
  t.teardown(() => page.context().close());
  // A garbage token, an overlong one, and one that is well formed (checksum and all) but was never issued.
  for (const token of ['ob_nonsense', `ob_${'x'.repeat(300)}`, mintToken('ob_')]) {
    const res = await page.goto(`${service.url}/onboarding/${token}`);
    t.is(res?.status(), 404, token.slice(0, 40));
    t.regex(res?.headers()['content-type'] ?? '', /^text\/html/);
    const text = await visibleText(page);
    t.regex(text, /This link is not valid/);
    const html = await page.content();
    t.notRegex(html, HIDDEN_NAMES);
    t.notRegex(html, /\bat .+:\d+:\d+|node_modules|\.ts\b|Error:|"statusCode"/, 'no stack trace or JSON error');
    t.notRegex(html, /Northwind/, 'an unknown link cannot know whose brand to show');
  }
});

test.serial('at 375 px the terms card keeps a margin from both screen edges; button text is readable on a light accent', async (t) => {
  const customer = await createCustomer('Narrow Screen Bakery', 'narrow-1');
  const url = await mintLink(customer);
  // A light accent (amber): white text on it would be 2.15:1.
  const amber = await request(service.url, 'PATCH', '/v1/brand', { token: key, body: { accent_color: '#f59e0b' } });
  t.is(amber.status, 200, amber.text);
  t.teardown(() => request(service.url, 'PATCH', '/v1/brand', { token: key, body: { accent_color: null } }));
  const context = await browser.newContext({ viewport: { width: 375, height: 812 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.route('https://example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PIXEL }));
  t.is((await page.goto(url))?.status(), 200);
  const box = await page.locator('main').boundingBox();
  t.truthy(box);
  t.true(box!.x >= 12, `the card's left edge is ${box!.x} px from the screen's`);
  t.true(375 - (box!.x + box!.width) >= 12, `the card's right edge is ${375 - (box!.x + box!.width)} px from the screen's`);
  const scrollWidth = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
  t.is(scrollWidth, 375, 'nothing scrolls sideways');
  const button = await page.locator('button[type=submit]').evaluate((el) => {
    const style = (globalThis as any).getComputedStyle(el);
    return { color: style.color as string, background: style.backgroundColor as string };
  });
  t.deepEqual(button, { color: 'rgb(0, 0, 0)', background: 'rgb(245, 158, 11)' }, 'black text on amber');
});
