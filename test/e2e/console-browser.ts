/**
 * How the browser tests of the reseller console look at a page (console-journey, console-payments):
 * wait until it has settled, screenshot it at desktop and phone widths, run axe-core (no serious
 * or critical violation), check nothing scrolls sideways at 375 px, and keep what the browser's
 * console said that was an error.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import axe from 'axe-core';
import type { Page } from 'playwright-core';

export const WIDTHS = [1280, 375] as const;

/** The page has finished loading its data: no request in flight, no "Loading…" on screen. */
export async function settled(p: Page): Promise<void> {
  await p.waitForLoadState('networkidle');
  await p.waitForFunction(() => !document.querySelector('.loading'), undefined, { timeout: 10_000 });
}

/** axe-core in the page through the devtools protocol (not governed by the page's CSP). */
export async function seriousAxeViolations(p: Page): Promise<string[]> {
  await p.evaluate(axe.source);
  const results = await p.evaluate(() => (window as unknown as { axe: typeof axe }).axe.run());
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

/** Screenshots `p` into `out` at each width, with axe at both and no sideways scrolling at 375 px. */
export async function lookAtWidths(t: ExecutionContext, out: string, name: string, p: Page): Promise<void> {
  for (const width of WIDTHS) {
    await p.setViewportSize({ width, height: 900 });
    await p.waitForTimeout(150);
    const file = path.join(out, `${name}-${width}.png`);
    await p.screenshot({ path: file, fullPage: true });
    t.true((await fs.stat(file)).size > 2000, `${name} at ${width}: a real screenshot`);
    t.deepEqual(await seriousAxeViolations(p), [], `${name} at ${width}: no serious or critical axe violation`);
    if (width === 375) {
      const { scrollWidth, clientWidth } = await p.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
      t.true(scrollWidth <= clientWidth, `${name} at 375 px scrolls sideways: ${scrollWidth} > ${clientWidth}`);
    }
  }
}

/**
 * What a page's console says that is an error (and the addresses of answers in error, which
 * explain "Failed to load resource"), kept until taken.
 */
export function watchConsoleErrors(p: Page): { take: (expected?: RegExp[]) => string[] } {
  let errors: string[] = [];
  p.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  p.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  p.on('response', (r) => r.status() >= 400 && errors.push(`(${r.status()} ${r.request().method()} ${new URL(r.url()).pathname})`));
  return {
    /** The errors since the last call, except ones a step expects (an answer it provoked on purpose). */
    take(expected: RegExp[] = []) {
      const left = errors.filter((e) => !expected.some((x) => x.test(e)));
      errors = [];
      // The addresses alone are not errors: they explain the ones that are.
      return left.some((e) => !e.startsWith('(')) ? left : [];
    },
  };
}

/** `lookAtWidths` once the page settled, back at 1280 px after, and no console error since the last look. */
export async function look(t: ExecutionContext, out: string, name: string, p: Page, errors: { take: (expected?: RegExp[]) => string[] }, expected: RegExp[] = []): Promise<void> {
  await settled(p);
  try {
    await lookAtWidths(t, out, name, p);
  } finally {
    await p.setViewportSize({ width: 1280, height: 900 });
  }
  t.deepEqual(errors.take(expected), [], `${name}: no console error`);
}

/** Polls `check` until it holds or `ms` pass. */
export async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
