/**
 * Composed pages in a real browser (Debian's chromium via playwright-core), served by a tiny local
 * server: a rich page and a bare one, live and test mode, at 1280 and 375 px. Each is screenshotted,
 * loads without console errors, asks for nothing but itself, has no horizontal scroll on a phone,
 * and passes axe-core with no serious or critical violation.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import axe from 'axe-core';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { composePage } from '../../actors/websites/composer.ts';
import { deterministicCopy } from '../../actors/websites/copy.ts';
import type { SiteFacts } from '../../actors/websites/site-facts.ts';
import { bareFacts, HIDDEN_NAMES, richFacts } from '../helpers/site-facts.ts';

const PAGES: Record<string, SiteFacts> = {
  'rich-live': richFacts(),
  'rich-test': richFacts({ mode: 'test' }),
  'bare-live': bareFacts(),
  'bare-test': bareFacts({ mode: 'test', locale: 'de-DE', brief: 'Eine kleine Zahnarztpraxis am Hafen. Kontrolluntersuchungen, Prophylaxe und Notfallbehandlung.' }),
};
const WIDTHS = [1280, 375];

let browser: Browser;
let server: http.Server;
let origin = '';
let shots = '';

test.before(async () => {
  const html = new Map<string, string>();
  for (const [name, facts] of Object.entries(PAGES)) {
    const copy = deterministicCopy(facts);
    if (!copy.ok) throw new Error(`${name}: ${copy.reason}`);
    html.set(`/${name}`, composePage(facts, copy.copy).html);
  }
  server = http.createServer((req, res) => {
    const page = html.get(req.url ?? '');
    if (page) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  shots = await fs.mkdtemp(path.join(os.tmpdir(), 'site-shots-'));
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close().catch(() => {});
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (shots) await fs.rm(shots, { recursive: true, force: true });
});

for (const name of Object.keys(PAGES)) {
  for (const width of WIDTHS) {
    test.serial(`${name} at ${width} px: screenshot, no console error, no other request, no horizontal scroll, no serious axe violation`, async (t) => {
      // CSP bypassed for the test's own injected axe script only; the page's policy stays in its HTML.
      const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
      t.teardown(() => context.close());
      const page = await context.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('request', (r) => requests.push(r.url()));

      const response = await page.goto(`${origin}/${name}`, { waitUntil: 'load' });
      t.is(response?.status(), 200);
      await page.waitForLoadState('networkidle');

      const file = path.join(shots, `${name}-${width}.png`);
      await page.screenshot({ path: file, fullPage: true });
      const png = await fs.readFile(file);
      t.true(png.length > 1000, 'a real screenshot');
      t.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');

      t.deepEqual(errors, []);
      t.deepEqual(requests, [`${origin}/${name}`], 'the page asks for nothing but itself');

      // Runs in the page (this file is type-checked without the DOM library).
      const { scrollWidth, clientWidth } = await page.evaluate(() => {
        const root = (globalThis as any).document.documentElement;
        return { scrollWidth: root.scrollWidth as number, clientWidth: root.clientWidth as number };
      });
      t.true(scrollWidth <= clientWidth, `no horizontal scroll: ${scrollWidth} > ${clientWidth}`);

      const text = await page.locator('body').innerText();
      t.notRegex(text, HIDDEN_NAMES);
      t.is(await page.locator('h1').count(), 1);
      const call = page.locator('main .hero a[href^="tel:"]');
      t.is(await call.count(), 1);
      t.true(await call.isVisible());
      const isTest = PAGES[name].mode === 'test';
      t.is(await page.locator('header [role="note"]').isVisible(), isTest, 'the test banner shows in test mode only');
      t.is(await page.locator('meta[name="robots"]').count(), isTest ? 1 : 0);

      await page.addScriptTag({ content: axe.source });
      const results = await page.evaluate(() => ((globalThis as unknown as { axe: typeof axe }).axe.run()));
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
      t.deepEqual(serious, []);
      t.log(`${name} ${width}px: ${png.length} bytes PNG, axe: ${results.violations.length} violations (${results.violations.map((v) => `${v.id}/${v.impact}`).join(', ') || 'none'}), ${results.passes.length} passes`);
    });
  }
}
