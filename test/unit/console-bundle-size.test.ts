/**
 * "Fast: first load under 300 KB of compressed JavaScript" (issue 21): builds the console when its
 * sources changed, then gzips every script index.html loads (its entry and the modules it
 * preloads; pages and the chart load later, on demand) and fails above 300 KB.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../../app/console-build.ts';

const BUDGET_BYTES = 300 * 1024;

test('the JavaScript index.html loads weighs under 300 KB gzipped, and pages are split out of it', async (t) => {
  t.timeout(180_000);
  await ensureConsoleBuilt({ quiet: true });
  const html = fs.readFileSync(path.join(CONSOLE_DIST, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g), ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
  t.true(scripts.length > 0, 'index.html loads a script');
  let total = 0;
  for (const src of new Set(scripts)) {
    t.true(src.startsWith('/console/assets/'), src);
    const file = path.join(CONSOLE_DIST, 'assets', path.basename(src));
    const gz = zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;
    t.log(`${path.basename(src)}: ${(gz / 1024).toFixed(1)} KB gzipped`);
    total += gz;
  }
  t.log(`first load: ${(total / 1024).toFixed(1)} KB of gzipped JavaScript (budget ${BUDGET_BYTES / 1024} KB)`);
  t.true(total <= BUDGET_BYTES, `first load ${(total / 1024).toFixed(1)} KB > 300 KB`);
  // Pages and the chart are separate chunks, not in the first load.
  const assets = fs.readdirSync(path.join(CONSOLE_DIST, 'assets'));
  t.true(assets.some((f) => /^Overview-.*\.js$/.test(f)), 'the overview page is its own chunk');
  t.true(assets.some((f) => /^CallsChart-.*\.js$/.test(f)), 'the chart (uplot) is its own chunk');
  t.false(scripts.some((s) => /CallsChart|Overview/.test(s)), 'neither is loaded first');
});
