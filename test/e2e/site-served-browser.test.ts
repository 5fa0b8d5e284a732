/**
 * Sites as the service serves them (issue 15), in a real browser (Debian's chromium via
 * playwright-core): a live-mode and a test-mode site at their `url` and at their preview URL,
 * ordered, built and published through the API of the service running in this process. Each page
 * loads under the service's own headers, its Content-Security-Policy included (no bypass: a policy
 * that broke the page would show as a console error), asks for nothing but itself, is
 * screenshotted at 1280 and 375 px, and passes axe-core with no serious or critical violation.
 * The offline page of a suspended site and the not-found page pass axe too.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import axe from 'axe-core';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import type { Client } from '../helpers/http.ts';

const BRIEF = 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.';
const WIDTHS = [1280, 375];

let svc: TestService;
let browser: Browser;
let shots = '';
/** Addresses by name: each site's live address and its preview, the offline and the not-found page. */
const pages = new Map<string, { url: string; status: number; mode?: 'live' | 'test' }>();

/** Orders, builds and publishes a site for a new customer of `api`; returns the published build. */
async function publishedSite(api: Client, con: Client, name: string, publish = true) {
  const c = (await api.post('/v1/customers', { name, country: 'GB' })).body;
  const order = await api.post(`/v1/customers/${c.id}/websites`, { brief: BRIEF });
  if (order.status !== 202) throw new Error(`order: ${order.status} ${order.text}`);
  await con.post('/admin/v1/website_builder/run');
  // The preview as it was before publishing (a live-mode site's preview ends at publish).
  const preview = (await api.get(`/v1/customers/${c.id}/websites/${order.body.id}`)).body.preview_url as string;
  if (!publish) return { id: order.body.id as string, url: '', preview_url: preview };
  const live = await api.post(`/v1/customers/${c.id}/websites/${order.body.id}/publish`, {});
  if (live.status !== 200) throw new Error(`publish: ${live.status} ${live.text}`);
  return { ...(live.body as { id: string; url: string }), preview_url: preview };
}

test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_JOB_INTERVAL_MS: '3600000', SWITCHBOARD_BUILDER_POLL_MS: '3600000' });
  const a = await makeAccount(svc.url, { live: true });
  await a.admin.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 150_000 });
  const live = await publishedSite(a.liveApi!, a.admin, 'Bright Dental');
  const testMode = await publishedSite(a.api, a.admin, 'Harbour Cafe');
  // Test sites are served only at their preview (issue 20): the offline page is a live site's.
  const suspended = await publishedSite(a.liveApi!, a.admin, 'Corner Bakery');
  pages.set('live-site', { url: live.url, status: 200, mode: 'live' });
  // A live-mode preview is served until publishing: a build that is ready, not published.
  const ready = await publishedSite(a.liveApi!, a.admin, 'Bright Dental', false);
  pages.set('live-preview', { url: ready.preview_url, status: 200, mode: 'live' });
  pages.set('test-site', { url: testMode.url, status: 200, mode: 'test' });
  pages.set('test-preview', { url: testMode.preview_url, status: 200, mode: 'test' });
  // The offline page: a site in its suspension (the hosting lifecycle that leads here has tests of its own).
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await db.query(`UPDATE website_builds SET status = 'suspended' WHERE id = $1`, [suspended.id]);
  await db.end();
  pages.set('offline', { url: suspended.url, status: 503 });
  pages.set('not-found', { url: `${svc.url}/sites/nobody-here-000000/`, status: 404 });
  // Nothing may differ from what the browser fetches (the test only checks the addresses are the service's).
  for (const { url } of pages.values()) if (!url.startsWith(`${svc.url}/sites/`)) throw new Error(`not a local site address: ${url}`);
  shots = await fs.mkdtemp(path.join(os.tmpdir(), 'served-site-shots-'));
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close().catch(() => {});
  await svc?.stop();
  if (shots) await fs.rm(shots, { recursive: true, force: true });
});

/** axe-core run inside the page through the devtools protocol (which the page's CSP does not govern). */
async function seriousAxeViolations(t: ExecutionContext, page: Page, label: string): Promise<string[]> {
  await page.evaluate(axe.source);
  // Runs in the page (this file is type-checked without the DOM library).
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run());
  t.log(`${label}: axe ${results.violations.length} violations (${results.violations.map((v) => `${v.id}/${v.impact}`).join(', ') || 'none'}), ${results.passes.length} passes`);
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

/** Opens `url` at `width` px with the service's headers as they are; what the page logged and asked for. */
async function open(t: ExecutionContext, url: string, width: number) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  const response = await page.goto(url, { waitUntil: 'load' });
  await page.waitForLoadState('networkidle');
  return { page, response, errors, requests };
}

for (const name of ['live-site', 'live-preview', 'test-site', 'test-preview']) {
  for (const width of WIDTHS) {
    test.serial(`${name} at ${width} px: served with its CSP, screenshot, no console error, no other request, no horizontal scroll, no serious axe violation`, async (t) => {
      const { url, mode } = pages.get(name)!;
      const { page, response, errors, requests } = await open(t, url, width);
      t.is(response?.status(), 200);
      const headers = response!.headers();
      t.regex(headers['content-security-policy'] ?? '', /default-src 'none'/, 'the page is judged under the policy it is served with');
      t.regex(headers['content-type'] ?? '', /^text\/html; charset=utf-8/);

      const file = path.join(shots, `${name}-${width}.png`);
      await page.screenshot({ path: file, fullPage: true });
      const png = await fs.readFile(file);
      t.true(png.length > 1000, 'a real screenshot');
      t.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');

      t.deepEqual(errors, [], 'no console error: the served CSP does not break the page');
      t.deepEqual(requests, [url], 'the page asks for nothing but itself');
      // The styles applied (an inline style refused by the CSP would leave the page unstyled).
      const styled = await page.evaluate(() => {
        const g = globalThis as any;
        return g.getComputedStyle(g.document.body).fontFamily as string;
      });
      t.notRegex(styled, /^"?Times/i, `the page's own styles apply (font: ${styled})`);
      const { scrollWidth, clientWidth } = await page.evaluate(() => {
        const root = (globalThis as any).document.documentElement;
        return { scrollWidth: root.scrollWidth as number, clientWidth: root.clientWidth as number };
      });
      t.true(scrollWidth <= clientWidth, `no horizontal scroll: ${scrollWidth} > ${clientWidth}`);

      const text = await page.locator('body').innerText();
      t.regex(text, /Bright Dental|Harbour Cafe/);
      t.notRegex(text, /switchboard/i);
      t.is(await page.locator('header [role="note"]').isVisible(), mode === 'test', 'the test banner shows in test mode only');

      t.deepEqual(await seriousAxeViolations(t, page, `${name} ${width}px`), []);
    });
  }
}

for (const name of ['offline', 'not-found']) {
  test.serial(`${name} page: its status, no console error, no other request, no serious axe violation`, async (t) => {
    const { url, status } = pages.get(name)!;
    const { page, response, errors, requests } = await open(t, url, 375);
    t.is(response?.status(), status);
    t.deepEqual(errors.filter((e) => !/Failed to load resource: the server responded with a status of (404|503)/.test(e)), []);
    t.deepEqual(requests, [url]);
    await page.screenshot({ path: path.join(shots, `${name}-375.png`), fullPage: true });
    t.regex(await page.locator('h1').innerText(), name === 'offline' ? /offline/i : /not found/i);
    t.deepEqual(await seriousAxeViolations(t, page, name), []);
  });
}
